import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateFileError } from '../state/versioned-json-file.js';
import { ACCESS_FILE, AccessDirectory, AccessInputError, policyOf, UnknownPersonError } from './access-directory.js';
import { placeFromRoot, THIS_MACHINE } from './place-root.js';

const CODE = '_users/alice/Chats/Code/projects/42';
const WORK = '_users/alice/Chats/Work/projects/7';

let stateDir: string;
let path: string;

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'access-directory-'));
  path = join(stateDir, ACCESS_FILE);
});
afterEach(() => rm(stateDir, { recursive: true, force: true }));

async function onDisk(): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}

test('a missing file is an empty directory', async () => {
  const dir = new AccessDirectory(stateDir);
  assert.equal(dir.path, path);
  assert.deepEqual(await dir.snapshot(), { version: 1, people: {}, places: {} });
});

test('setPerson adds or replaces a person, trimming the name and storing disabled only when set', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPerson('alice', { name: '  Alice Smith ' });
  await dir.setPerson('bob', { name: 'Bob', disabled: true });
  assert.deepEqual(await onDisk(), {
    version: 1,
    people: { alice: { name: 'Alice Smith' }, bob: { name: 'Bob', disabled: true } },
    places: {},
  });
  const after = await dir.setPerson('bob', { name: 'Bob', disabled: false });
  assert.deepEqual(after.people.bob, { name: 'Bob' });
  assert.deepEqual(await dir.snapshot(), after);
});

test('setPerson refuses bad user ids and names, and disabling local', async () => {
  const dir = new AccessDirectory(stateDir);
  const cases: [string, string, boolean, RegExp][] = [
    ['', 'A', false, /The user id "" must be 1 to 200 characters/],
    ['x'.repeat(201), 'A', false, /must be 1 to 200 characters/],
    ['   ', 'A', false, /must not be only spaces/],
    ['a\nb', 'A', false, /must be printable characters only/],
    ['a\u200bb', 'A', false, /must be printable characters only/],
    ['__proto__', 'A', false, /is reserved/],
    ['alice', '   ', false, /A person's name must be 1 to 200 characters/],
    ['alice', 'x'.repeat(201), false, /A person's name must be 1 to 200 characters/],
    ['alice', 'Al\u0000ice', false, /A person's name must be printable characters only/],
    ['local', 'Me', true, /"local" is whoever runs this app and cannot be disabled/],
  ];
  for (const [id, name, disabled, message] of cases) {
    await assert.rejects(
      dir.setPerson(id, { name, disabled }),
      (error: unknown) => error instanceof AccessInputError && message.test(error.message),
      JSON.stringify([id, name]),
    );
  }
  await dir.setPerson('x'.repeat(200), { name: '名前' });
  await dir.setPerson('auth0|abc 123', { name: 'With a space' });
  await dir.setPerson('local', { name: 'Me' });
  assert.deepEqual(Object.keys((await dir.snapshot()).people).sort(), ['auth0|abc 123', 'local', 'x'.repeat(200)]);
});

test('setPlaceAccess replaces a place entry, dropping duplicates and empty lists; empty lists remove it', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPlaceAccess('Crew/alpha', { editors: ['bob', 'bob', 'carol'], readers: [] });
  await dir.setPlaceAccess('', { readers: ['dave'] });
  await dir.setPlaceAccess(WORK, { editors: ['bob'], readers: ['erin'] });
  assert.deepEqual(((await onDisk()) as { places: unknown }).places, {
    'Crew/alpha': { editors: ['bob', 'carol'] },
    '': { readers: ['dave'] },
    [WORK]: { editors: ['bob'], readers: ['erin'] },
  });
  await dir.setPlaceAccess('Crew/alpha', { readers: ['zoe'] });
  await dir.setPlaceAccess('', {});
  await dir.setPlaceAccess(WORK, { editors: [], readers: [] });
  assert.deepEqual((await dir.snapshot()).places, { 'Crew/alpha': { readers: ['zoe'] } });
});

test('setPlaceAccess refuses editors for a Code, saying its participants are readers', async () => {
  const dir = new AccessDirectory(stateDir);
  await assert.rejects(
    dir.setPlaceAccess(CODE, { editors: ['bob'] }),
    (error: unknown) =>
      error instanceof AccessInputError &&
      error.message === "Code project 42 of alice: A Code's only editor is its owner; add its participants as readers.",
  );
  const snapshot = await dir.setPlaceAccess(CODE, { editors: [], readers: ['bob'] });
  assert.deepEqual(snapshot.places[CODE], { readers: ['bob'] });
});

test('setPlaceAccess refuses a root that is not exactly a place root, and bad user ids', async () => {
  const dir = new AccessDirectory(stateDir);
  const cases: [string, string[], RegExp][] = [
    ['src/foo', [], /"src\/foo" is not in a place/],
    ['Crew/alpha/runs', [], /is not a place root/],
    ['Crew/', [], /the Crew id is empty/],
    ['Crew/alpha', ['ok', ''], /The user id "" must be 1 to 200 characters/],
    ['Crew/alpha', ['\t'], /must be printable characters only/],
  ];
  for (const [root, editors, message] of cases) {
    await assert.rejects(
      dir.setPlaceAccess(root, { editors }),
      (error: unknown) => error instanceof AccessInputError && message.test(error.message),
      root,
    );
  }
  await assert.rejects(dir.setPlaceAccess('Crew/alpha', { readers: [' '] }), /must not be only spaces/);
  assert.deepEqual(await readdir(stateDir), [], 'nothing was written');
});

test('removePerson forgets the person and takes them off every list', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPerson('bob', { name: 'Bob', disabled: true });
  await dir.setPerson('carol', { name: 'Carol' });
  await dir.setPlaceAccess('Crew/alpha', { editors: ['bob', 'carol'], readers: ['bob'] });
  await dir.setPlaceAccess('Workflow/release', { readers: ['bob'] });
  const after = await dir.removePerson('bob');
  assert.deepEqual(after, { version: 1, people: { carol: { name: 'Carol' } }, places: { 'Crew/alpha': { editors: ['carol'] } } });
  assert.deepEqual(await onDisk(), after);
});

test('removePerson removes someone who is only on a list, and refuses someone unknown', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPlaceAccess('Crew/alpha', { readers: ['dave'] });
  assert.deepEqual((await dir.removePerson('dave')).places, {});
  await assert.rejects(
    dir.removePerson('dave'),
    (error: unknown) => error instanceof UnknownPersonError && /"dave" is not in the access directory/.test(error.message),
  );
  await assert.rejects(dir.removePerson('constructor'), UnknownPersonError);
});

test('snapshot returns a frozen copy: a caller cannot change the directory by mutating it', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPlaceAccess('Crew/alpha', { editors: ['bob'] });
  const snapshot = await dir.snapshot();
  assert.throws(() => (snapshot.places['Crew/alpha']!.editors as string[]).push('mallory'), TypeError);
});

test('a change made by another instance (the CLI) is seen by the next query', async () => {
  const server = new AccessDirectory(stateDir);
  const cli = new AccessDirectory(stateDir);
  assert.deepEqual((await server.snapshot()).people, {});
  await cli.setPerson('bob', { name: 'Bob' });
  assert.deepEqual((await server.snapshot()).people, { bob: { name: 'Bob' } });
  await cli.setPerson('bob', { name: 'Bob', disabled: true });
  assert.equal((await server.snapshot()).people.bob?.disabled, true);
  await server.setPlaceAccess('Crew/alpha', { editors: ['bob'] });
  assert.deepEqual((await cli.snapshot()).places, { 'Crew/alpha': { editors: ['bob'] } });
});

test('a mutation re-reads the file first, so it keeps what another instance wrote', async () => {
  const server = new AccessDirectory(stateDir);
  await server.snapshot();
  await writeFile(path, JSON.stringify({ version: 1, people: { bob: { name: 'Bob' } }, places: {} }));
  await server.setPerson('carol', { name: 'Carol' });
  assert.deepEqual(Object.keys((await server.snapshot()).people).sort(), ['bob', 'carol']);
});

test('concurrent mutations from two instances are all kept', async () => {
  const one = new AccessDirectory(stateDir);
  const two = new AccessDirectory(stateDir);
  const ids = Array.from({ length: 30 }, (_, i) => `person-${i}`);
  await Promise.all([
    ...ids.map((id, i) => (i % 2 ? one : two).setPerson(id, { name: id })),
    ...ids.map((id, i) => (i % 2 ? two : one).setPlaceAccess(`Crew/${id}`, { readers: [id] })),
  ]);
  const snapshot = await new AccessDirectory(stateDir).snapshot();
  assert.deepEqual(Object.keys(snapshot.people).sort(), [...ids].sort());
  assert.deepEqual(Object.keys(snapshot.places).sort(), ids.map((id) => `Crew/${id}`).sort());
});

for (const [what, content, problem] of [
  ['not JSON', '{', /it is not valid JSON/],
  ['a bad user id', { version: 1, people: { ' ': { name: 'X' } }, places: {} }, /\(people\[" "\]: a user id must not be only spaces\)/],
  ['a bad name', { version: 1, people: { bob: { name: '' } }, places: {} }, /\(people\.bob\.name: a name must be 1 to 200 characters\)/],
  [
    'a bad reader',
    { version: 1, people: {}, places: { 'Crew/a': { readers: [''] } } },
    /\(places\["Crew\/a"\]\.readers\[0\]: a user id must be 1 to 200 characters\)/,
  ],
  ['a root that is no place', { version: 1, people: {}, places: { 'src/foo': {} } }, /places\["src\/foo"\]: "src\/foo" is not in a place/],
  ['a path inside a place as a root', { version: 1, people: {}, places: { 'Crew/a/runs': {} } }, /is not a place root/],
  [
    'editors on a Code',
    { version: 1, people: {}, places: { [CODE]: { editors: ['bob'] } } },
    /places\["_users\/alice\/Chats\/Code\/projects\/42"\]\.editors: A Code's only editor is its owner/,
  ],
  [
    'a typo in a key',
    { version: 1, people: {}, places: { 'Crew/a': { editor: ['bob'] } } },
    /places\["Crew\/a"\]: Unrecognized key: "editor"/,
  ],
  ['a "__proto__" person', '{"version":1,"people":{"__proto__":{"name":"X","disabled":true}},"places":{}}', /"__proto__" key/],
  ['version 0', { version: 0, people: {}, places: {} }, /\(version: /],
  [
    'an unknown policy',
    { version: 1, people: {}, places: { 'Crew/a': { policy: { kind: 'open' } } } },
    /places\["Crew\/a"\]\.policy\.kind/,
  ],
  [
    'a relative policy folder',
    { version: 1, people: {}, places: { 'Crew/a': { policy: { kind: 'place', folders: ['data'] } } } },
    /places\["Crew\/a"\]\.policy: The folder "data" must be an absolute path/,
  ],
] as const) {
  test(`a file with ${what} is moved aside and reported, and stays refused`, async () => {
    const text = typeof content === 'string' ? content : JSON.stringify(content);
    await writeFile(path, text);
    const dir = new AccessDirectory(stateDir);
    const error = await dir.snapshot().then(
      () => assert.fail('snapshot should fail'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof StateFileError);
    assert.match(error.message, /^The access directory .*access\.json was moved to .*access\.json\.corrupt-/);
    assert.match(error.message, problem);
    const asides = (await readdir(stateDir)).filter((name) => name.startsWith('access.json.corrupt-'));
    assert.equal(asides.length, 1);
    assert.equal(await readFile(join(stateDir, asides[0]!), 'utf8'), text);
    // Not silently empty: every query and every mutation keeps failing until someone acts.
    await assert.rejects(dir.snapshot(), StateFileError);
    await assert.rejects(new AccessDirectory(stateDir).snapshot(), StateFileError);
    await assert.rejects(dir.setPerson('carol', { name: 'Carol' }), StateFileError);
  });
}

test('a directory from a newer app version is refused and left in place', async () => {
  await writeFile(path, JSON.stringify({ version: 2, people: {}, places: {}, groups: {} }));
  await assert.rejects(new AccessDirectory(stateDir).snapshot(), /newer version of this app/);
  assert.deepEqual(await readdir(stateDir), [ACCESS_FILE]);
});

test('setPlacePolicy keeps a policy beside the lists, normalizes folders, and machine removes it', async () => {
  const dir = new AccessDirectory(stateDir);
  const alpha = placeFromRoot('Crew/alpha');
  assert.deepEqual(policyOf(await dir.snapshot(), alpha), { kind: 'machine', folders: [] }, 'machine by default');
  await dir.setPlaceAccess('Crew/alpha', { editors: ['bob'] });
  await dir.setPlacePolicy('Crew/alpha', 'place', ['/srv/data/', '/srv/data', '/opt/../srv/shared']);
  assert.deepEqual(await onDisk(), {
    version: 1,
    people: {},
    places: { 'Crew/alpha': { editors: ['bob'], policy: { kind: 'place', folders: ['/srv/data', '/srv/shared'] } } },
  });
  assert.deepEqual(policyOf(await dir.snapshot(), alpha), { kind: 'place', folders: ['/srv/data', '/srv/shared'] });

  // Changing the lists, or forgetting their only person, keeps the policy.
  await dir.setPlaceAccess('Crew/alpha', {});
  await dir.setPerson('bob', { name: 'Bob' });
  await dir.removePerson('bob');
  assert.deepEqual((await dir.snapshot()).places['Crew/alpha'], { policy: { kind: 'place', folders: ['/srv/data', '/srv/shared'] } });

  await dir.setPlacePolicy('Crew/alpha', 'strict');
  assert.deepEqual(((await onDisk()) as { places: unknown }).places, { 'Crew/alpha': { policy: { kind: 'strict' } } });
  await dir.setPlacePolicy('Crew/alpha', 'machine');
  assert.deepEqual(((await onDisk()) as { places: unknown }).places, {}, 'machine is no entry at all');

  // This machine's policy is that of tokens that name no place.
  await dir.setPlacePolicy('', 'strict', ['/srv/data']);
  assert.deepEqual(policyOf(await dir.snapshot(), THIS_MACHINE), { kind: 'strict', folders: ['/srv/data'] });
});

test('setPlacePolicy refuses a bad policy, folder or place and changes nothing', async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPlacePolicy('Crew/alpha', 'place');
  const before = await readFile(path, 'utf8');
  const cases: [string, string, string[], RegExp][] = [
    ['Crew/alpha', 'open', [], /"open" is not a policy: use machine, place or strict/],
    ['Crew/alpha', 'place', ['data'], /"data" must be an absolute path/],
    ['Crew/alpha', 'place', ['/'], /root folder cannot be an extra folder/],
    ['Crew/alpha', 'machine', ['/srv'], /Extra folders go with the place or strict policy/],
    ['Crew/alpha', 'place', ['/a\0b'], /NUL/],
    ['src/foo', 'place', [], /is not in a place/],
  ];
  for (const [root, kind, folders, message] of cases) {
    await assert.rejects(
      dir.setPlacePolicy(root, kind, folders),
      (e: unknown) => e instanceof AccessInputError && message.test(e.message),
      `${root} ${kind} ${folders}`,
    );
  }
  assert.equal(await readFile(path, 'utf8'), before);
});

test('setPlaceNetwork keeps a normalized allow-list in the policy; the policy keeps it; machine drops it', async () => {
  const dir = new AccessDirectory(stateDir);
  const alpha = placeFromRoot('Crew/alpha');
  await assert.rejects(
    dir.setPlaceNetwork('Crew/alpha', ['example.com']),
    (e: unknown) => e instanceof AccessInputError && /has the machine policy.*choose the place or strict policy first/.test(e.message),
  );
  await dir.setPlacePolicy('Crew/alpha', 'strict', ['/srv/data']);
  await dir.setPlaceNetwork('Crew/alpha', ['API.Example.com.', '*.NPMjs.org', 'bücher.de', 'api.example.com', 'localhost']);
  const listed = ['api.example.com', '*.npmjs.org', 'xn--bcher-kva.de', 'localhost'];
  assert.deepEqual(((await onDisk()) as { places: unknown }).places, {
    'Crew/alpha': { policy: { kind: 'strict', folders: ['/srv/data'], network: listed } },
  });
  assert.deepEqual(policyOf(await dir.snapshot(), alpha), { kind: 'strict', folders: ['/srv/data'], network: listed });

  // Changing the policy (or its folders) keeps the list; machine reaches every host and drops it.
  await dir.setPlacePolicy('Crew/alpha', 'place');
  assert.deepEqual(policyOf(await dir.snapshot(), alpha), { kind: 'place', folders: [], network: listed });
  await dir.setPlaceNetwork('Crew/alpha', []);
  assert.deepEqual(
    ((await onDisk()) as { places: unknown }).places,
    { 'Crew/alpha': { policy: { kind: 'place' } } },
    'an empty list is no list',
  );
  await dir.setPlaceNetwork('Crew/alpha', ['example.com']);
  await dir.setPlacePolicy('Crew/alpha', 'machine');
  await dir.setPlacePolicy('Crew/alpha', 'strict');
  assert.deepEqual(policyOf(await dir.snapshot(), alpha), { kind: 'strict', folders: [] });

  const before = await readFile(path, 'utf8');
  for (const bad of [
    'https://example.com',
    'example.com:443',
    'example.com/path',
    '*.',
    'a..b',
    '*.10.0.0.1',
    'exa mple.com',
    'user@example.com',
    'ex%61mple.com',
  ]) {
    await assert.rejects(
      dir.setPlaceNetwork('Crew/alpha', [bad]),
      (e: unknown) => e instanceof AccessInputError && /is not a host name: write a name/.test(e.message),
      bad,
    );
  }
  assert.equal(await readFile(path, 'utf8'), before, 'a refused list changes nothing');
});

test("setPlaceToolSearch keeps the place's lists, and the lists' changes keep it; auto removes it", async () => {
  const dir = new AccessDirectory(stateDir);
  await dir.setPerson('bob', { name: 'Bob' });
  await dir.setPlaceAccess('Crew/alpha', { readers: ['bob'] });
  assert.deepEqual((await dir.setPlaceToolSearch('Crew/alpha', 'on')).places['Crew/alpha'], { readers: ['bob'], toolSearch: 'on' });
  assert.deepEqual((await dir.setPlaceAccess('Crew/alpha', { editors: ['bob'] })).places['Crew/alpha'], {
    editors: ['bob'],
    toolSearch: 'on',
  });
  assert.deepEqual((await dir.removePerson('bob')).places['Crew/alpha'], { toolSearch: 'on' });
  assert.deepEqual((await dir.setPlaceToolSearch('', 'off')).places[''], { toolSearch: 'off' });
  assert.deepEqual((await dir.setPlaceToolSearch('Crew/alpha', 'auto')).places['Crew/alpha'], undefined);
  assert.deepEqual(((await onDisk()) as { places: unknown }).places, { '': { toolSearch: 'off' } });
  await assert.rejects(dir.setPlaceToolSearch('Crew', 'on'), AccessInputError);
});
