import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AccessDirectorySnapshot } from './access-directory.js';
import { listPlaces, MAX_SCANNED_ENTRIES } from './place-list.js';
import { PlacePathError } from './place-root.js';

let ws: string;

beforeEach(async () => {
  ws = await mkdtemp(join(tmpdir(), 'place-list-'));
});
afterEach(() => rm(ws, { recursive: true, force: true }));

async function folders(...paths: string[]): Promise<void> {
  for (const path of paths) await mkdir(join(ws, ...path.split('/')), { recursive: true });
}

const dir: AccessDirectorySnapshot = {
  version: 1,
  people: { carol: { name: 'Carol', disabled: true } },
  places: {
    'Crew/alpha': { editors: ['bob'] },
    'Crew/gone': { readers: ['erin'] },
  },
};

async function workspace(): Promise<void> {
  await folders(
    'Workflow/release',
    'Workflow/.drafts',
    'Crew/alpha/runs/12',
    'Crew/beta',
    '_users/alice/Chats/Work/projects/7',
    '_users/alice/Chats/Code/projects/42',
    '_users/alice/Chats/Code/projects/10',
    '_users/alice/Chats/Code/projects/.cache',
    '_users/bob/Chats/Code/projects/1',
    '_users/.trash/Chats/Code/projects/9',
    'src/foo',
    'elsewhere/target',
  );
  await writeFile(join(ws, 'Workflow', 'notes.txt'), 'not a folder');
  await symlink(join(ws, 'elsewhere', 'target'), join(ws, 'Crew', 'linked'), 'dir');
}

async function roots(person: string, directory = dir, extra: string[] = []): Promise<string[]> {
  return (await listPlaces(ws, directory, person, extra)).places.map((place) => place.root);
}

test('local sees This machine first, then every place folder, directory root and extra root, by label', async () => {
  await workspace();
  const list = await listPlaces(ws, dir, 'local', ['Workflow/old', 'Crew/alpha']);
  assert.equal(list.truncated, false);
  assert.deepEqual(
    list.places.map((place) => place.label),
    [
      'This machine',
      'Code project 1 of bob',
      'Code project 10 of alice',
      'Code project 42 of alice',
      'Crew alpha',
      'Crew beta',
      'Crew gone',
      'Work project 7 of alice',
      'Workflow old',
      'Workflow release',
    ],
  );
  assert.deepEqual(list.places[2], {
    root: '_users/alice/Chats/Code/projects/10',
    kind: 'code',
    owner: 'alice',
    label: 'Code project 10 of alice',
  });
});

test('each person sees only the places they can read', async () => {
  await workspace();
  assert.deepEqual(await roots('alice'), [
    '',
    '_users/alice/Chats/Code/projects/10',
    '_users/alice/Chats/Code/projects/42',
    '_users/alice/Chats/Work/projects/7',
  ]);
  assert.deepEqual(await roots('bob'), ['', '_users/bob/Chats/Code/projects/1', 'Crew/alpha']);
  assert.deepEqual(await roots('erin'), ['', 'Crew/gone']);
  assert.deepEqual(await roots('carol'), []);
  const restricted = { ...dir, places: { ...dir.places, '': { readers: ['bob'] } } };
  assert.deepEqual(await roots('erin', restricted), ['Crew/gone']);
});

test('an empty or missing workspace lists This machine and the named roots only', async () => {
  assert.deepEqual(await roots('local'), ['', 'Crew/alpha', 'Crew/gone']);
  await rm(ws, { recursive: true });
  assert.deepEqual(await roots('local', dir, ['Workflow/x']), ['', 'Crew/alpha', 'Crew/gone', 'Workflow/x']);
});

test('a kind folder that is a file, or a folder name no root can hold, is skipped', async () => {
  await folders('_users/alice', 'Crew/ok');
  await writeFile(join(ws, '_users', 'alice', 'Chats'), 'a file');
  await writeFile(join(ws, 'Workflow'), 'a file');
  if (process.platform !== 'win32') await folders('Crew/a\\b', 'Crew/line\nbreak');
  assert.deepEqual(await roots('local', { version: 1, people: {}, places: {} }), ['', 'Crew/ok']);
});

test('a folder this process may not read is skipped', { skip: process.getuid?.() === 0 && 'root reads every folder' }, async () => {
  await folders('_users/bob/Chats/Code/projects/1', 'Crew/ok');
  await chmod(join(ws, '_users', 'bob'), 0o000);
  try {
    assert.deepEqual(await roots('local', { version: 1, people: {}, places: {} }), ['', 'Crew/ok']);
  } finally {
    await chmod(join(ws, '_users', 'bob'), 0o700);
  }
});

test('a root that is not a place root, from the caller, is an error', async () => {
  await assert.rejects(listPlaces(ws, dir, 'local', ['Crew/alpha/runs']), PlacePathError);
});

test('the disk scan stops after MAX_SCANNED_ENTRIES entries and says so', async () => {
  const names = Array.from({ length: MAX_SCANNED_ENTRIES + 1 }, (_, i) => `c${i}`);
  await folders('Crew');
  await Promise.all(names.map((name) => mkdir(join(ws, 'Crew', name))));
  await folders('_users/zed/Chats/Code/projects/1');
  const list = await listPlaces(ws, { version: 1, people: {}, places: {} }, 'local', []);
  assert.equal(list.truncated, true);
  assert.equal(list.places.length, 1 + MAX_SCANNED_ENTRIES);
  assert.ok(!list.places.some((place) => place.owner === 'zed'), 'nothing is scanned after the budget');
});

test('exactly MAX_SCANNED_ENTRIES entries is a complete scan', async () => {
  await folders('Crew');
  await Promise.all(Array.from({ length: MAX_SCANNED_ENTRIES }, (_, i) => mkdir(join(ws, 'Crew', `c${i}`))));
  const list = await listPlaces(ws, { version: 1, people: {}, places: {} }, 'local', []);
  assert.equal(list.truncated, false);
  assert.equal(list.places.length, 1 + MAX_SCANNED_ENTRIES);
});
