import type { AccessDirectorySnapshot, PlaceAccess } from './access-directory.js';
import type { Place } from './place-root.js';
import { LOCAL_PERSON, userIdProblem } from './user-id.js';

/*
 * The place connections spec's rules (place-mcp-connections.md) over one directory snapshot, checked on add and again on every use:
 * - `local` (whoever runs the app) reads and edits every place;
 * - a disabled person does nothing anywhere;
 * - a Work or Code project's owner edits it; a Code's only editor is its owner, its participants
 *   (readers) read; a Work project's listed editors edit too, its readers read;
 * - a Workflow's or Crew's listed editors edit; editors and readers read;
 * - This machine: listed editors edit; every authenticated person reads, unless the place lists
 *   readers, then only they and its editors do.
 */

export function canEdit(dir: AccessDirectorySnapshot, person: string, place: Place): boolean {
  if (person === LOCAL_PERSON) return true;
  if (!isActive(dir, person)) return false;
  if (place.owner === person) return true;
  return place.kind !== 'code' && (access(dir, place).editors?.includes(person) ?? false);
}

export function canRead(dir: AccessDirectorySnapshot, person: string, place: Place): boolean {
  if (canEdit(dir, person, place)) return true;
  if (!isActive(dir, person)) return false;
  const readers = access(dir, place).readers ?? [];
  if (place.kind === 'machine' && readers.length === 0) return true;
  return readers.includes(person);
}

/**
 * Why a connection added by `person` is paused in `place`: they cannot edit it any more. Nothing
 * when they can.
 */
export function editBlocker(dir: AccessDirectorySnapshot, person: string, place: Place): string | undefined {
  if (canEdit(dir, person, place)) return undefined;
  const name = (Object.hasOwn(dir.people, person) && dir.people[person]?.name) || person;
  if (isDisabled(dir, person)) return `${name} was disabled`;
  return `${name} can no longer edit ${place.label}`;
}

/** The person who added a connection may remove it, and so may anyone who can edit the place. */
export function canRemoveConnection(dir: AccessDirectorySnapshot, person: string, place: Place, adder: string): boolean {
  return canEdit(dir, person, place) || (person === adder && isActive(dir, person));
}

/** A valid user id that is not disabled. */
function isActive(dir: AccessDirectorySnapshot, person: string): boolean {
  return userIdProblem(person) === undefined && !isDisabled(dir, person);
}

function isDisabled(dir: AccessDirectorySnapshot, person: string): boolean {
  return Object.hasOwn(dir.people, person) && dir.people[person]?.disabled === true;
}

function access(dir: AccessDirectorySnapshot, place: Place): PlaceAccess {
  return (Object.hasOwn(dir.places, place.root) && dir.places[place.root]) || {};
}
