import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AccessDirectorySnapshot, PlaceAccess } from './access-directory.js';
import { canEdit, canRead, canRemoveConnection, editBlocker } from './access-rules.js';
import { placeFromRoot, THIS_MACHINE } from './place-root.js';

const crew = placeFromRoot('Crew/alpha');
const workflow = placeFromRoot('Workflow/release');
const work = placeFromRoot('_users/alice/Chats/Work/projects/7');
const code = placeFromRoot('_users/alice/Chats/Code/projects/42');
const bobsCode = placeFromRoot('_users/bob/Chats/Code/projects/1');
const unlisted = placeFromRoot('Crew/beta');
const machine = THIS_MACHINE;

const people = {
  alice: { name: 'Alice' },
  bob: { name: 'Bob' },
  carol: { name: 'Carol', disabled: true },
  dave: { name: 'Dave' },
  erin: { name: 'Erin' },
};
const listed: PlaceAccess = { editors: ['bob', 'carol'], readers: ['dave'] };

function directory(
  places: Record<string, PlaceAccess> = {},
  extraPeople: Record<string, { name: string; disabled?: boolean }> = {},
): AccessDirectorySnapshot {
  return {
    version: 1,
    people: { ...people, ...extraPeople },
    places: {
      [crew.root]: listed,
      [workflow.root]: listed,
      [work.root]: listed,
      // Stored editors of a Code cannot come from the directory's own writes; the rules ignore them anyway.
      [code.root]: listed,
      ...places,
    },
  };
}

const base = directory();
const machineRestricted = directory({ '': { editors: ['bob'], readers: ['dave'] } });
const machineEditorsOnly = directory({ '': { editors: ['bob'] } });
const aliceDisabled = directory({}, { alice: { name: 'Alice', disabled: true } });
const localDisabled = directory({}, { local: { name: 'Me', disabled: true } });

type Access = 'edit' | 'read' | 'none';
const cases: [string, AccessDirectorySnapshot, string, typeof crew, Access][] = [
  // local reads and edits everything, even if the file (edited by hand) says it is disabled.
  ...[crew, workflow, work, code, bobsCode, unlisted, machine].flatMap((place): typeof cases => [
    ['base', base, 'local', place, 'edit'],
    ['machine restricted', machineRestricted, 'local', place, 'edit'],
    ['local disabled', localDisabled, 'local', place, 'edit'],
  ]),
  // Workflow and Crew: listed editors edit; readers read; nobody else; a disabled editor nothing.
  ...[crew, workflow].flatMap((place): typeof cases => [
    ['base', base, 'bob', place, 'edit'],
    ['base', base, 'dave', place, 'read'],
    ['base', base, 'carol', place, 'none'],
    ['base', base, 'erin', place, 'none'],
    ['base', base, 'alice', place, 'none'],
    ['base', base, 'stranger', place, 'none'],
  ]),
  ['base', base, 'bob', unlisted, 'none'],
  ['base', base, 'dave', unlisted, 'none'],
  // Work project: owner and listed editors edit; readers read.
  ['base', base, 'alice', work, 'edit'],
  ['base', base, 'bob', work, 'edit'],
  ['base', base, 'dave', work, 'read'],
  ['base', base, 'carol', work, 'none'],
  ['base', base, 'erin', work, 'none'],
  ['alice disabled', aliceDisabled, 'alice', work, 'none'],
  // Code: the owner is its only editor; participants (readers) read.
  ['base', base, 'alice', code, 'edit'],
  ['base', base, 'bob', code, 'none'],
  ['base', base, 'dave', code, 'read'],
  ['base', base, 'carol', code, 'none'],
  ['base', base, 'erin', code, 'none'],
  ['alice disabled', aliceDisabled, 'alice', code, 'none'],
  ['base', base, 'bob', bobsCode, 'edit'],
  ['base', base, 'alice', bobsCode, 'none'],
  ['base', base, 'Alice', code, 'none'],
  // This machine: open to every authenticated, non-disabled person by default.
  ['base', base, 'bob', machine, 'read'],
  ['base', base, 'erin', machine, 'read'],
  ['base', base, 'stranger', machine, 'read'],
  ['base', base, 'carol', machine, 'none'],
  ['machine editors only', machineEditorsOnly, 'bob', machine, 'edit'],
  ['machine editors only', machineEditorsOnly, 'erin', machine, 'read'],
  // ...unless it lists readers: then only they and its editors.
  ['machine restricted', machineRestricted, 'bob', machine, 'edit'],
  ['machine restricted', machineRestricted, 'dave', machine, 'read'],
  ['machine restricted', machineRestricted, 'erin', machine, 'none'],
  ['machine restricted', machineRestricted, 'stranger', machine, 'none'],
  // Ids that cannot be a person get nothing, and names of Object's own properties mean nothing.
  ['base', base, '', machine, 'none'],
  ['base', base, '   ', machine, 'none'],
  ['base', base, '__proto__', machine, 'none'],
  ['base', base, 'constructor', machine, 'read'],
  ['base', base, 'constructor', crew, 'none'],
];

test('canRead and canEdit follow the place connections spec for every person, place kind and directory state', () => {
  for (const [state, dir, person, place, expected] of cases) {
    const label = `${person} in ${place.label} (${state})`;
    assert.equal(canEdit(dir, person, place), expected === 'edit', `${label}: edit`);
    assert.equal(canRead(dir, person, place), expected !== 'none', `${label}: read`);
  }
});

test("editBlocker says why a connection's adder can no longer use it, and nothing while they can", () => {
  const blockers: [AccessDirectorySnapshot, string, typeof crew, string | undefined][] = [
    [base, 'bob', crew, undefined],
    [base, 'alice', code, undefined],
    [base, 'local', crew, undefined],
    [localDisabled, 'local', crew, undefined],
    [base, 'carol', crew, 'Carol was disabled'],
    [base, 'carol', machine, 'Carol was disabled'],
    [aliceDisabled, 'alice', code, 'Alice was disabled'],
    [base, 'dave', crew, 'Dave can no longer edit Crew alpha'],
    [base, 'bob', code, 'Bob can no longer edit Code project 42 of alice'],
    [base, 'erin', workflow, 'Erin can no longer edit Workflow release'],
    [base, 'stranger', work, 'stranger can no longer edit Work project 7 of alice'],
    [base, 'constructor', crew, 'constructor can no longer edit Crew alpha'],
    [base, 'bob', machine, 'Bob can no longer edit This machine'],
  ];
  for (const [dir, person, place, expected] of blockers) {
    assert.equal(editBlocker(dir, person, place), expected, `${person} in ${place.label}`);
  }
});

test('a connection is removed by its adder or by anyone who can edit the place', () => {
  const removals: [AccessDirectorySnapshot, string, typeof crew, string, boolean][] = [
    [base, 'dave', crew, 'dave', true],
    [base, 'erin', crew, 'erin', true],
    [base, 'bob', crew, 'dave', true],
    [base, 'local', crew, 'dave', true],
    [base, 'alice', work, 'bob', true],
    [base, 'bob', work, 'alice', true],
    [base, 'erin', crew, 'dave', false],
    [base, 'dave', crew, 'bob', false],
    [base, 'dave', code, 'alice', false],
    [base, 'bob', code, 'alice', false],
    // Disabled people do nothing, not even remove their own connection.
    [base, 'carol', crew, 'carol', false],
    [base, 'carol', crew, 'dave', false],
    [localDisabled, 'local', code, 'alice', true],
  ];
  for (const [dir, person, place, adder, expected] of removals) {
    assert.equal(canRemoveConnection(dir, person, place, adder), expected, `${person} removes ${adder}'s in ${place.label}`);
  }
});
