import { join } from 'node:path';
import type { Change } from '../../common/api/events.js';
import { TOKEN_STORE_FILE } from '../auth/agent-tokens.js';
import { OAUTH_STATE_FILE } from '../auth/agent-oauth/oauth-state.js';
import { ACCESS_FILE } from '../places/access-directory.js';
import { SECRETS_FILE } from '../secrets/encrypted-file-store.js';
import { PLACE_SECRETS_LOCK } from '../secrets/place-secrets.js';
import { FolderWatch } from './folder-watch.js';

/** What each state file holds, as topics of the change feed. */
const TOPICS: Readonly<Record<string, readonly Change[]>> = {
  [ACCESS_FILE]: [{ topic: 'places' }, { topic: 'connections' }],
  [OAUTH_STATE_FILE]: [{ topic: 'sign-ins' }, { topic: 'clients' }],
  [TOKEN_STORE_FILE]: [{ topic: 'tokens' }],
  [SECRETS_FILE]: [{ topic: 'secrets' }],
  [PLACE_SECRETS_LOCK]: [{ topic: 'secrets' }],
};

export interface StateChangesOptions {
  stateDir: string;
  /** The connection store's folder and file name: the store itself tells which places changed. */
  connectionsFile: string;
  publish: (change: Change) => void;
  /** The connection store's file changed: the store reads it and tells its listeners which places changed. */
  connectionsChanged: () => void;
  /** Place secrets changed in another process (the keychain has no file: the lock every writer takes says so). */
  secretsChanged: () => void;
  report: (error: Error) => void;
}

/**
 * Watches the state files for changes, by this process or another (the CLI writes them too), and
 * tells the change feed. Stops with the returned function.
 */
export function watchStateFiles(options: StateChangesOptions): () => void {
  const { publish } = options;
  const state = new FolderWatch(
    options.stateDir,
    { stamped: [ACCESS_FILE, OAUTH_STATE_FILE, TOKEN_STORE_FILE, SECRETS_FILE], always: [PLACE_SECRETS_LOCK] },
    (name) => {
      if (name === SECRETS_FILE || name === PLACE_SECRETS_LOCK) options.secretsChanged();
      for (const change of TOPICS[name] ?? []) publish(change);
    },
    options.report,
  );
  const connections = new FolderWatch(
    join(options.stateDir, 'personal-mcp'),
    { stamped: [options.connectionsFile] },
    () => options.connectionsChanged(),
    options.report,
  );
  state.start();
  connections.start();
  return () => {
    state.close();
    connections.close();
  };
}
