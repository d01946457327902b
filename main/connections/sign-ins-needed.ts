import { canRead } from '../places/access-rules.js';
import { placeFromRoot } from '../places/place-root.js';
import type { AccessDirectory } from '../places/access-directory.js';
import type { PlaceConnections } from './place-connections.js';
import type { ConnectionStore } from './store/connection-store.js';

/** A connection that waits for its person to sign in, named as the tray shows it. */
export interface UpstreamSignInNeeded {
  displayName: string;
  /** The place's label ("This machine", "Crew/alpha"). */
  place: string;
}

/**
 * The connections that use `person`'s login and whose server, when last measured, asked for a
 * sign-in: what only that person can fix. Only places that have connections are looked at, and no
 * check is waited for (a connection still being checked is not counted yet).
 */
export async function signInsNeeded(
  person: string,
  deps: { store: ConnectionStore; access: AccessDirectory; connections: PlaceConnections },
): Promise<UpstreamSignInNeeded[]> {
  const dir = await deps.access.snapshot();
  const found: UpstreamSignInNeeded[] = [];
  for (const root of await deps.store.roots()) {
    const place = placeFromRoot(root);
    if (!canRead(dir, person, place)) continue;
    for (const view of await deps.connections.list(person, place, { waitMs: 0 })) {
      if (view.mine && view.state === 'sign-in') found.push({ displayName: view.displayName, place: place.label });
    }
  }
  return found;
}
