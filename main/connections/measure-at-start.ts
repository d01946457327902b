import { placeFromRoot } from '../places/place-root.js';
import type { ConnectionHealth } from './gateway/connection-health.js';
import type { PlaceConnections } from './place-connections.js';
import type { ConnectionStore } from './store/connection-store.js';

/**
 * Starts the first check of every place's usable remote connections as the agent endpoint opens:
 * a place's first agent then finds its connections measured (or being measured) instead of
 * starting the checks itself after it connected, and the page shows states, not "not checked yet".
 * Local servers still start on first use. Results reach the health listeners as any check's do.
 */
export async function measureAtStart(deps: {
  store: ConnectionStore;
  connections: PlaceConnections;
  health: ConnectionHealth;
}): Promise<void> {
  for (const root of await deps.store.roots()) {
    for (const connection of await deps.connections.usable(placeFromRoot(root))) {
      if (connection.transport !== 'stdio') deps.health.ensureChecked(connection);
    }
  }
}
