/** How a place is named in messages: its root, or "This machine" for the workspace root itself. */
export function describePlace(root: string): string {
  return root === '' ? '"This machine"' : `"${root}"`;
}

/** An argument is not something the store can hold (a bad user id, place root, catalog id or field). */
export class ConnectionInputError extends Error {
  override readonly name = 'ConnectionInputError';
}

/** The person already has a connection from that catalog entry in that place (one per person, place and catalog id). */
export class ConnectionExistsError extends Error {
  override readonly name = 'ConnectionExistsError';
}

/** No such connection in the place (or not one of that person's). */
export class ConnectionNotFoundError extends Error {
  override readonly name = 'ConnectionNotFoundError';
}

/** The connections file cannot be used; the message says what happened and what to do. */
export class ConnectionStoreError extends Error {
  override readonly name = 'ConnectionStoreError';

  constructor(
    message: string,
    /** The connections file. */
    readonly path: string,
    /** Where an unreadable file was moved, when it was. */
    readonly movedTo?: string,
  ) {
    super(message);
  }
}
