import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { placeFromRoot, PlacePathError, placeRootOf, THIS_MACHINE, type Place } from './place-root.js';

const WS = '/srv/workspace';

const crewAlpha: Place = { root: 'Crew/alpha', kind: 'crew', label: 'Crew alpha' };
const release: Place = { root: 'Workflow/release', kind: 'workflow', label: 'Workflow release' };
const work7: Place = { root: '_users/alice/Chats/Work/projects/7', kind: 'work', owner: 'alice', label: 'Work project 7 of alice' };
const code42: Place = { root: '_users/alice/Chats/Code/projects/42', kind: 'code', owner: 'alice', label: 'Code project 42 of alice' };

test('placeRootOf maps a path inside a place to that place, relative or absolute', () => {
  const cases: [string, Place][] = [
    ['', THIS_MACHINE],
    ['.', THIS_MACHINE],
    ['./', THIS_MACHINE],
    [WS, THIS_MACHINE],
    [`${WS}/`, THIS_MACHINE],
    ['Crew/alpha', crewAlpha],
    ['Crew/alpha/', crewAlpha],
    ['./Crew//alpha', crewAlpha],
    ['Crew/alpha/runs/12/x.txt', crewAlpha],
    [`${WS}/Crew/alpha/runs/12/x.txt`, crewAlpha],
    ['Crew/beta/../alpha/notes', crewAlpha],
    ['Crew/alpha/./.', crewAlpha],
    ['Workflow/release', release],
    ['Workflow/release/steps/build.md', release],
    ['_users/alice/Chats/Work/projects/7', work7],
    ['_users/alice/Chats/Work/projects/7/a/b', work7],
    [`${WS}/_users/alice/Chats/Code/projects/42/src/index.ts`, code42],
    ['_users/alice/Chats/Code/projects/42', code42],
    ['Crew/a b', { root: 'Crew/a b', kind: 'crew', label: 'Crew a b' }],
  ];
  for (const [input, expected] of cases) {
    assert.deepEqual(placeRootOf(WS, input, path.posix), expected, input);
  }
});

test('placeRootOf accepts a workspace root given with a trailing slash or dot segments', () => {
  assert.deepEqual(placeRootOf('/srv/./workspace/', '/srv/workspace/Crew/alpha/x', path.posix), crewAlpha);
  assert.equal(placeRootOf('/srv/workspace/', '/srv/workspace', path.posix), THIS_MACHINE);
});

test('placeRootOf takes backslashes as separators on Windows, with the drive compared case-insensitively', () => {
  const win = path.win32;
  assert.deepEqual(placeRootOf('C:\\ws', 'Crew\\alpha\\runs\\1', win), crewAlpha);
  assert.deepEqual(placeRootOf('C:\\ws', 'c:\\WS\\Crew\\alpha\\x.txt', win), crewAlpha);
  assert.deepEqual(placeRootOf('C:\\ws', 'Crew/alpha//x', win), crewAlpha);
  assert.deepEqual(placeRootOf('C:\\ws', '_users\\alice\\Chats\\Code\\projects\\42\\', win), code42);
  assert.equal(placeRootOf('C:\\ws', 'C:\\ws\\', win), THIS_MACHINE);
  assert.throws(() => placeRootOf('C:\\ws', 'D:\\ws\\Crew\\alpha', win), /outside the workspace/);
  assert.throws(() => placeRootOf('C:\\ws', '\\\\server\\share\\Crew\\alpha', win), /outside the workspace/);
});

test('placeRootOf refuses what names no place, with a message listing the place kinds', () => {
  const cases: [string, RegExp][] = [
    [
      'src/foo',
      /"src\/foo" is not in a place: a place is the workspace root itself \(This machine\), Workflow\/<name>, Crew\/<id>, _users\/<owner>\/Chats\/Work\/projects\/<id> or _users\/<owner>\/Chats\/Code\/projects\/<id>\./,
    ],
    ['notes.txt', /not in a place/],
    ['crew/alpha', /not in a place/],
    ['Crew', /"Crew" names no Crew id/],
    ['Crew/', /"Crew\/" names no Crew id/],
    ['Crew/alpha/..', /names no Crew id/],
    ['Workflow', /names no workflow name/],
    ['_users', /names no project id/],
    ['_users/alice', /names no project id/],
    ['_users/alice/Chats/Work/projects', /names no project id/],
    ['_users/alice/notes.txt', /not in a place/],
    ['_users/alice/Chats/Personal/projects/1', /not in a place/],
    ['_users/alice/Chats/Work/items/1', /not in a place/],
    ['_users/alice/chats/Work/projects/1', /not in a place/],
  ];
  for (const [input, message] of cases) {
    assert.throws(
      () => placeRootOf(WS, input, path.posix),
      (error: unknown) => error instanceof PlacePathError && message.test(error.message),
      input,
    );
  }
});

test('placeRootOf refuses paths outside the workspace root', () => {
  for (const input of ['..', '../other', 'Crew/../../etc', '/etc/passwd', '/srv/workspace-2/Crew/alpha', '/srv']) {
    assert.throws(() => placeRootOf(WS, input, path.posix), /is outside the workspace \/srv\/workspace/, input);
  }
});

test('placeRootOf refuses NUL bytes, control characters, backslashes in names, over-long input and a relative workspace root', () => {
  const cases: [string, string, RegExp][] = [
    [WS, 'Crew/al\0pha', /must not contain a NUL character/],
    [WS, 'Crew/al\npha/x', /the Crew id contains a control, bidi or invisible character/],
    // Read as "Crew/alpha.txt" would be something else entirely: a right-to-left override.
    [WS, 'Crew/al\u202Etxt.ahp/x', /the Crew id contains a control, bidi or invisible character/],
    [WS, 'Crew/al\\pha', /the Crew id contains a backslash/],
    [WS, `Crew/${'x'.repeat(256)}`, /the Crew id is longer than 255 characters/],
    [WS, `Crew/${'x/'.repeat(2100)}`, /must be at most 4096 characters/],
    ['workspace', 'Crew/alpha', /The workspace root must be an absolute path/],
  ];
  for (const [root, input, message] of cases) {
    assert.throws(
      () => placeRootOf(root, input, path.posix),
      (error: unknown) => error instanceof PlacePathError && message.test(error.message),
      JSON.stringify(input),
    );
  }
});

test('placeRootOf uses the platform path rules by default', () => {
  assert.deepEqual(placeRootOf(path.resolve(WS), path.join('Crew', 'alpha', 'x')), crewAlpha);
});

test('placeFromRoot accepts exactly the place roots', () => {
  assert.equal(placeFromRoot(''), THIS_MACHINE);
  for (const place of [crewAlpha, release, work7, code42]) assert.deepEqual(placeFromRoot(place.root), place);
});

test('placeFromRoot refuses anything that is not a normalized place root', () => {
  const cases: [string, RegExp][] = [
    ['.', /not in a place/],
    ['/', /not in a place/],
    ['/Crew/alpha', /not in a place/],
    ['Crew', /names no Crew id/],
    ['Crew/', /the Crew id is empty/],
    ['Crew//alpha', /the Crew id is empty/],
    ['Crew/.', /the Crew id is "\."/],
    ['Crew/..', /the Crew id is "\.\."/],
    ['Crew/alpha/', /is not a place root/],
    ['Crew/alpha/runs', /is not a place root/],
    ['./Crew/alpha', /not in a place/],
    ['Crew\\alpha', /not in a place/],
    ['Crew/a\\b', /contains a backslash/],
    ['Crew/a\0b', /NUL/],
    ['Workflow/\u0007', /the workflow name contains a control, bidi or invisible character/],
    ['Crew/alpha\u200B', /the Crew id contains a control, bidi or invisible character/],
    ['Crew/\u2066alpha\u2069', /the Crew id contains a control, bidi or invisible character/],
    ['Workflow/a\u2028b', /the workflow name contains a control, bidi or invisible character/],
    ['_users/ali\u202Dce/Chats/Work/projects/1', /the owner contains a control, bidi or invisible character/],
    ['_users/alice/Chats/Code/projects/4\uD8002', /the project id contains a control, bidi or invisible character/],
    ['_users//Chats/Work/projects/1', /the owner is empty/],
    ['_users/../Chats/Work/projects/1', /the owner is "\.\."/],
    ['_users/alice/Chats/Code/projects/', /the project id is empty/],
    ['_users/alice/Chats/Code/projects/42/src', /is not a place root/],
    ['__proto__', /not in a place/],
    ['constructor/x', /not in a place/],
  ];
  for (const [root, message] of cases) {
    assert.throws(
      () => placeFromRoot(root),
      (error: unknown) => error instanceof PlacePathError && message.test(error.message),
      JSON.stringify(root),
    );
  }
});

test('THIS_MACHINE cannot be changed by a caller', () => {
  assert.ok(Object.isFrozen(THIS_MACHINE));
  assert.deepEqual(THIS_MACHINE, { root: '', kind: 'machine', label: 'This machine' });
});
