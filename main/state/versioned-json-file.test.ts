import { afterEach, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileRequestsDuring } from '../../test/support/file-requests.js';
import fs from 'node:fs';
import fsp, { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { StateFileError, VersionedJsonFile } from './versioned-json-file.js';

const schema = z.strictObject({ version: z.literal(1), items: z.array(z.string().min(1)) });
type Content = z.infer<typeof schema>;

let dir: string;
let path: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'versioned-json-'));
  path = join(dir, 'things.json');
});
afterEach(async () => {
  mock.restoreAll();
  syncBuiltinESMExports();
  await rm(dir, { recursive: true, force: true });
});

function openFile(file = path): VersionedJsonFile<Content> {
  return new VersionedJsonFile({ path: file, version: 1, schema, empty: { version: 1, items: [] }, title: 'The thing list' });
}

const add =
  (item: string) =>
  (current: Content): Content => ({ ...current, items: [...current.items, item] });

async function asides(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith('things.json.corrupt-'));
}

test('an absent file (or folder) holds the empty value', async () => {
  assert.deepEqual(await openFile().read(), { version: 1, items: [] });
  assert.deepEqual(await openFile(join(dir, 'missing', 'things.json')).read(), { version: 1, items: [] });
});

test('update writes the file atomically, creating its folder, with mode 0600, and returns what it wrote', async () => {
  const file = openFile(join(dir, 'state', 'things.json'));
  assert.deepEqual(await file.update(add('a')), { version: 1, items: ['a'] });
  const written = join(dir, 'state', 'things.json');
  assert.deepEqual(JSON.parse(await readFile(written, 'utf8')), { version: 1, items: ['a'] });
  if (process.platform !== 'win32') {
    assert.equal((await stat(written)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'state'))).mode & 0o777, 0o700);
  }
  assert.deepEqual(await readdir(join(dir, 'state')), ['things.json']);
});

test('what read returns is deeply frozen, so no caller can change the shared copy', async () => {
  await openFile().update(add('a'));
  const content = await openFile().read();
  assert.ok(Object.isFrozen(content) && Object.isFrozen(content.items));
  assert.ok(Object.isFrozen(await openFile().read()));
});

test('a change written by another instance (another process) is seen by the next read', async () => {
  const mine = openFile();
  const theirs = openFile();
  assert.deepEqual((await mine.read()).items, []);
  await theirs.update(add('a'));
  assert.deepEqual((await mine.read()).items, ['a']);
  await writeFile(path, JSON.stringify({ version: 1, items: ['b', 'c'] }));
  assert.deepEqual((await mine.read()).items, ['b', 'c']);
  await unlink(path);
  assert.deepEqual((await mine.read()).items, []);
});

test('an unchanged file costs one stat per read once it has settled; a change is still noticed', async () => {
  await writeFile(path, JSON.stringify({ version: 1, items: ['a'] }));
  // Two seconds later the file's timestamps prove it unchanged.
  const later = Date.now() + 10_000;
  mock.method(Date, 'now', () => later);
  const opens = mock.method(fsp, 'open');
  syncBuiltinESMExports();
  const file = openFile();
  await file.read();
  await file.read();
  await file.read();
  assert.equal(opens.mock.callCount(), 1);
  await writeFile(path, JSON.stringify({ version: 1, items: ['b'] }));
  assert.deepEqual((await file.read()).items, ['b']);
  assert.equal(opens.mock.callCount(), 2);
});

test('a settled file, or an absent one, is checked with no trip through the thread pool', async () => {
  await writeFile(path, JSON.stringify({ version: 1, items: ['a'] }));
  const later = Date.now() + 10_000;
  mock.method(Date, 'now', () => later);
  const present = openFile();
  const absent = openFile(join(dir, 'missing.json'));
  await present.read();
  await absent.read();
  const trips = await fileRequestsDuring(async () => {
    for (let i = 0; i < 20; i++) {
      assert.deepEqual((await present.read()).items, ['a']);
      assert.deepEqual((await absent.read()).items, []);
    }
  });
  assert.equal(trips, 0);
});

test('an absent file in a settled folder costs one stat per read; a file created there, or a swapped folder, is seen by the next read', async () => {
  const later = Date.now() + 10_000;
  mock.method(Date, 'now', () => later);
  const stats = mock.method(fs, 'statSync');
  syncBuiltinESMExports();
  const file = openFile();
  await file.read();
  stats.mock.resetCalls();
  for (let i = 0; i < 3; i++) assert.deepEqual((await file.read()).items, []);
  assert.equal(stats.mock.callCount(), 3, 'the folder alone, while it is unchanged');

  await writeFile(path, JSON.stringify({ version: 1, items: ['created'] }));
  assert.deepEqual((await file.read()).items, ['created']);

  // The whole folder replaced by another, first with the file, then without it but with an aside.
  const replaced: string[] = [];
  const swap = async (build: (folder: string) => Promise<void>) => {
    const next = `${dir}.next`;
    await mkdir(next);
    await build(next);
    replaced.push(`${dir}.old-${replaced.length}`);
    await rename(dir, replaced.at(-1)!);
    await rename(next, dir);
  };
  await unlink(path);
  assert.deepEqual((await file.read()).items, []);
  await swap((folder) => writeFile(join(folder, 'things.json'), JSON.stringify({ version: 1, items: ['swapped'] })));
  assert.deepEqual((await file.read()).items, ['swapped']);
  await unlink(path);
  assert.deepEqual((await file.read()).items, []);
  await swap((folder) => writeFile(join(folder, 'things.json.corrupt-2026-01-01T00-00-00-000Z'), 'garbage'));
  await assert.rejects(file.read(), /was moved to .* because it was unreadable/);
  await Promise.all(replaced.map((folder) => rm(folder, { recursive: true, force: true })));
});

test('an absent file in a folder changed moments ago is looked for again on every read, without the thread pool', async () => {
  const file = openFile(); // its folder was made just now
  await file.read();
  const trips = await fileRequestsDuring(async () => {
    for (let i = 0; i < 5; i++) assert.deepEqual((await file.read()).items, []);
  });
  assert.equal(trips, 0);
  await writeFile(join(dir, 'things.json.corrupt-2026-01-01T00-00-00-000Z'), 'garbage');
  await assert.rejects(file.read(), /was moved to .* because it was unreadable/);
  await writeFile(path, JSON.stringify({ version: 1, items: ['written'] }));
  assert.deepEqual((await file.read()).items, ['written']);
});

test('a file changed moments ago is read again on every read: its stat may not show a second change', async () => {
  await writeFile(path, JSON.stringify({ version: 1, items: ['a'] }));
  const opens = mock.method(fsp, 'open');
  syncBuiltinESMExports();
  const file = openFile();
  await file.read();
  await file.read();
  await file.read();
  assert.equal(opens.mock.callCount(), 3);
});

test('concurrent updates in one process are all kept, also across instances on one file', async () => {
  const first = openFile();
  const second = openFile();
  const items = Array.from({ length: 40 }, (_, i) => `item-${i}`);
  await Promise.all(items.map((item, i) => (i % 2 ? first : second).update(add(item))));
  assert.deepEqual([...(await openFile().read()).items].sort(), [...items].sort());
});

test('an update whose change throws writes nothing and does not stop the next one', async () => {
  const file = openFile();
  const failing = file.update(() => {
    throw new Error('no');
  });
  const next = file.update(add('a'));
  await assert.rejects(failing, /no/);
  assert.deepEqual((await next).items, ['a']);
});

test('an update returning the current value writes nothing', async () => {
  const file = openFile();
  await file.update((current) => current);
  assert.deepEqual(await readdir(dir), []);
});

test('an update that would write an invalid file is refused before writing', async () => {
  const file = openFile();
  await file.update(add('a'));
  await assert.rejects(file.update(add('')), z.ZodError);
  assert.deepEqual(JSON.parse(await readFile(path, 'utf8')).items, ['a']);
});

for (const [what, text, problem] of [
  ['not JSON', '{"version": 1, "items": [', /it is not valid JSON/],
  ['the wrong shape', '{"version": 1, "items": [""]}', /\(items\[0\]: Too small/],
  ['an unknown key', '{"version": 1, "items": [], "extra": true}', /\(the file: Unrecognized key: "extra"\)/],
  ['a __proto__ key', '{"version": 1, "items": [], "__proto__": {"x": 1}}', /"__proto__" key/],
  ['no version', '{"items": []}', /\(version: /],
] as const) {
  test(`a file with ${what} is moved aside and reported, never read as empty`, async () => {
    await writeFile(path, text);
    const error = await openFile()
      .read()
      .then(
        () => assert.fail('read should fail'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof StateFileError);
    const [aside] = await asides();
    assert.ok(aside, 'the file is kept aside');
    assert.equal(await readFile(join(dir, aside), 'utf8'), text);
    assert.match(error.message, new RegExp(`The thing list ${path} was moved to ${join(dir, aside)} because it was unreadable \\(`));
    assert.match(error.message, problem);
    assert.match(error.message, /until you fix that file and move it back to .*things\.json, or delete it to start from an empty one/);
  });
}

test('a moved-aside file stays refused, here and in other instances, until it is moved back or deleted', async () => {
  await writeFile(path, 'garbage');
  const file = openFile();
  await assert.rejects(file.read(), StateFileError);
  await assert.rejects(file.read(), /was moved to .* \(it is not valid JSON\)/);
  await assert.rejects(openFile().read(), /was moved to .* \(it is not valid JSON\)/);
  await assert.rejects(file.update(add('a')), StateFileError);
  assert.equal(await readFile(path, 'utf8').catch(() => 'absent'), 'absent', 'nothing was written');

  const [aside] = await asides();
  await writeFile(join(dir, aside!), JSON.stringify({ version: 1, items: ['fixed'] }));
  await assert.rejects(openFile().read(), /because it was unreadable\. It is refused/);
  await rename(join(dir, aside!), path);
  assert.deepEqual((await file.read()).items, ['fixed']);

  await writeFile(path, 'garbage again');
  await assert.rejects(file.read(), StateFileError);
  for (const name of await asides()) await unlink(join(dir, name));
  assert.deepEqual((await file.read()).items, []);
});

test('a second corrupt file gets its own aside name rather than replacing the first', async () => {
  const file = openFile();
  await writeFile(path, 'one');
  await assert.rejects(file.read(), StateFileError);
  await writeFile(path, 'two');
  await assert.rejects(file.read(), StateFileError);
  const contents = await Promise.all((await asides()).map((name) => readFile(join(dir, name), 'utf8')));
  assert.deepEqual(contents.sort(), ['one', 'two']);
});

test('a file of a newer format version is refused but left in place', async () => {
  const text = JSON.stringify({ version: 2, items: [], more: {} });
  await writeFile(path, text);
  await assert.rejects(
    openFile().read(),
    (error: unknown) =>
      error instanceof StateFileError && /newer version of this app \(format version 2\)\. Update the app/.test(error.message),
  );
  await assert.rejects(openFile().update(add('a')), StateFileError);
  assert.equal(await readFile(path, 'utf8'), text);
  assert.deepEqual(await asides(), []);
});
