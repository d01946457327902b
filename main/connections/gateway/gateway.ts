import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { PlaceConnection } from '../store/connection-store.js';
import type { UpstreamConnection } from './upstream-connection.js';
import type { UpstreamUnavailableError } from './upstream-unavailable-error.js';

export interface GatewayOptions {
  timeoutMs: number;
  /** Lets connections reach loopback and private addresses (local development and tests). */
  allowPrivateNetwork: boolean;
  /** The ports this app listens on: never reached on this machine, whatever the setting. */
  appPorts: () => readonly number[];
  /** The headers that carry a connection's credentials, read at each (re)connect. */
  credentials: (connection: PlaceConnection) => Promise<Record<string, string>>;
  /** For OAuth connections: adds the access token to every request, refreshing it as needed. */
  signedFetch: (connection: PlaceConnection, base: FetchLike) => FetchLike;
}

/** The pool of upstream clients: one per connection, made on first use, replaced when its record changes. */
export class Gateway {
  private readonly pool = new Map<string, { connection: UpstreamConnection; fingerprint: string }>();
  private readonly listeners = new Set<(connection: PlaceConnection) => void>();
  private readonly failureListeners = new Set<(connection: PlaceConnection, error: UpstreamUnavailableError) => void>();

  constructor(private readonly options: GatewayOptions) {}

  // The MCP SDK's client is loaded with the first upstream: a command that reaches no server never needs it.
  private clientModule?: Promise<typeof import('./upstream-connection.js')>;

  /** The connection's pooled client: the same one while its server and credentials stay the same. */
  async upstream(connection: PlaceConnection): Promise<UpstreamConnection> {
    const { UpstreamConnection } = await (this.clientModule ??= import('./upstream-connection.js'));
    // From here on nothing waits, so two callers never make two clients for one connection.
    const key = keyOf(connection);
    const fingerprint = fingerprintOf(connection);
    const pooled = this.pool.get(key);
    if (pooled?.fingerprint === fingerprint) return pooled.connection;
    if (pooled) void pooled.connection.close();
    const upstream = new UpstreamConnection(
      { name: connection.name, displayName: connection.displayName, url: connection.url, transport: connection.transport },
      {
        credentials: connection.auth.kind,
        timeoutMs: this.options.timeoutMs,
        allowPrivateNetwork: this.options.allowPrivateNetwork,
        appPorts: this.options.appPorts,
        headers: () => this.options.credentials(connection),
        ...(connection.auth.kind === 'oauth' && { signedFetch: (base: FetchLike) => this.options.signedFetch(connection, base) }),
        onToolsChanged: () => {
          for (const listener of this.listeners) listener(connection);
        },
        onFailure: (error) => {
          // A client replaced by a changed record fails as it closes: that says nothing of the connection as it is now
          // (and reporting it would have the old record checked, replacing the new client, back and forth).
          if (this.pool.get(key)?.connection !== upstream) return;
          for (const listener of this.failureListeners) listener(connection, error);
        },
      },
    );
    this.pool.set(key, { connection: upstream, fingerprint });
    return upstream;
  }

  /** Closes a removed connection's client. */
  async drop(connection: Pick<PlaceConnection, 'storeId' | 'name'>): Promise<void> {
    const key = keyOf(connection);
    const pooled = this.pool.get(key);
    this.pool.delete(key);
    await pooled?.connection.close();
  }

  /** A connection's upstream said its tools changed. */
  onToolsChanged(listener: (connection: PlaceConnection) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A request to a connection's upstream failed because of the link or the server. */
  onFailure(listener: (connection: PlaceConnection, error: UpstreamUnavailableError) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  async closeAll(): Promise<void> {
    const all = [...this.pool.values()];
    this.pool.clear();
    await Promise.all(all.map((p) => p.connection.close()));
  }
}

/** What the upstream client is made from; records are shared and frozen, so each is worked out once. */
const fingerprints = new WeakMap<PlaceConnection, string>();
export function fingerprintOf(connection: PlaceConnection): string {
  let fingerprint = fingerprints.get(connection);
  if (fingerprint === undefined) fingerprints.set(connection, (fingerprint = JSON.stringify([connection.url, connection.transport, connection.auth])));
  return fingerprint;
}

function keyOf(connection: Pick<PlaceConnection, 'storeId' | 'name'>): string {
  return `${connection.storeId}/${connection.name}`;
}
