import type { AccessDirectorySnapshot } from '../places/access-directory.js';
import { canEdit, canRead } from '../places/access-rules.js';
import type { Place } from '../places/place-root.js';

/** The person may not do this in this place. */
export class PlaceAccessError extends Error {
  override readonly name = 'PlaceAccessError';
}

/** The request names something that does not exist or does not fit; nothing was changed. */
export class ConnectionRequestError extends Error {
  override readonly name = 'ConnectionRequestError';
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

export function requireRead(dir: AccessDirectorySnapshot, person: string, place: Place): void {
  if (!canRead(dir, person, place))
    throw new PlaceAccessError(`${nameOf(dir, person)} cannot see ${place.label}. Ask one of its editors for access.`);
}

export function requireEdit(dir: AccessDirectorySnapshot, person: string, place: Place, what: string): void {
  if (!canEdit(dir, person, place)) {
    throw new PlaceAccessError(
      `${nameOf(dir, person)} cannot ${what} ${place.label}: only people who can edit it can. Ask an editor to add you.`,
    );
  }
}

/** The person's name in the access directory, else their id. */
export function nameOf(dir: AccessDirectorySnapshot, person: string): string {
  return dir.people[person]?.name ?? person;
}
