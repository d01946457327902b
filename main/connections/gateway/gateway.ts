import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { join } from 'node:path';
import type { LocalProcessStatus, LocalStart, LocalUpstream } from '../local/local-upstream.js';
import { StderrLog } from '../local/stderr-log.js';
import type { LocalConnection, PlaceConnection, RemoteConnection } from '../store/connection-store.js';
import type { UpstreamConnection } from './upstream-connection.js';
import type { UpstreamUnavailableError } from './upstream-unavailable-error.js';

/** What the gateway asks of a connection's server, remote or local. */
export type Upstream = Pick<UpstreamConnection, 'tools' | 'check' | 'call' | 'close'>;

/** How the gateway runs local servers. */
export interface LocalServersOptions {
  /** How to start a connection's server now (its sandbox, environment and secrets). */
  start: (connection: LocalConnection) => Promise<LocalStart>;
  /** The policy of its place now, as a key: a process started under another one is ended. */
  policyKey: (connection: LocalConnection) => Promise<string>;
  /** Where each server's stderr log goes (`<state>/local-servers`). */
  logDir: string;
  /** A server without a request for this long is ended. */
  idleMs: number;
}

export interface GatewayOptions {
  timeoutMs: number;
  /** Lets connections reach loopback and private addresses (local development and tests). */
  allowPrivateNetwork: boolean;
  /** The ports this app listens on: never reached on this machine, whatever the setting. */
  appPorts: () => readonly number[];
  /** The headers that carry a connection's credentials, read at each (re)connect. */
  credentials: (connection: PlaceConnection) => Promise<Record<string, string>>;
  /** For OAuth connections: adds the access token to every request, refreshing it as needed. */
  signedFetch: (connection: RemoteConnection, base: FetchLike) => FetchLike;
  local: LocalServersOptions;
}

/**
 * The pool of upstream clients: one per connection, made on first use, replaced when its record
 * changes. A local server's client owns its process: one per connection, shared by every session.
 */
export class Gateway {
  private readonly pool = new Map<string, { connection: Upstream; fingerprint: string; local?: LocalUpstream }>();
  private readonly listeners = new Set<(connection: PlaceConnection) => void>();
  private readonly failureListeners = new Set<(connection: PlaceConnection, error: UpstreamUnavailableError) => void>();

  constructor(private readonly options: GatewayOptions) {}

  // The MCP SDK's client is loaded with the first upstream: a command that reaches no server never needs it.
  private clientModule?: Promise<typeof import('./upstream-connection.js')>;
  private localModule?: Promise<typeof import('../local/local-upstream.js')>;

  /** Loads the code that reaches remote servers (the MCP SDK's client, undici) ahead of its first use; reaches none. */
  async loadRemoteClient(): Promise<void> {
    await (await (this.clientModule ??= import('./upstream-connection.js'))).loadUndici();
  }

  /** The connection's pooled client: the same one while its server and credentials stay the same. */
  async upstream(connection: PlaceConnection): Promise<Upstream> {
    const modules =
      connection.transport === 'stdio'
        ? await (this.localModule ??= import('../local/local-upstream.js'))
        : await (this.clientModule ??= import('./upstream-connection.js'));
    // From here on nothing waits, so two callers never make two clients for one connection.
    const key = keyOf(connection);
    const fingerprint = fingerprintOf(connection);
    const pooled = this.pool.get(key);
    if (pooled?.fingerprint === fingerprint) return pooled.connection;
    if (pooled) void pooled.connection.close();
    if (connection.transport === 'stdio')
      return this.local(connection, key, fingerprint, modules as typeof import('../local/local-upstream.js'));
    const { UpstreamConnection } = modules as typeof import('./upstream-connection.js');
    const remote = connection as RemoteConnection;
    const upstream = new UpstreamConnection(
      { name: connection.name, displayName: connection.displayName, url: remote.url, transport: remote.transport },
      {
        credentials: connection.auth.kind,
        timeoutMs: this.options.timeoutMs,
        allowPrivateNetwork: this.options.allowPrivateNetwork,
        appPorts: this.options.appPorts,
        headers: () => this.options.credentials(connection),
        ...(connection.auth.kind === 'oauth' && { signedFetch: (base: FetchLike) => this.options.signedFetch(remote, base) }),
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

  /** A local server's client, which starts its process on first use. */
  private local(
    connection: LocalConnection,
    key: string,
    fingerprint: string,
    { LocalUpstream }: typeof import('../local/local-upstream.js'),
  ): Upstream {
    const { local } = this.options;
    const upstream: LocalUpstream = new LocalUpstream(
      { name: connection.name, displayName: connection.displayName },
      {
        start: () => local.start(connection),
        policyKey: () => local.policyKey(connection),
        log: new StderrLog(logPathOf(local.logDir, connection)),
        timeoutMs: this.options.timeoutMs,
        idleMs: local.idleMs,
        onToolsChanged: () => {
          for (const listener of this.listeners) listener(connection);
        },
        onFailure: (error) => {
          if (this.pool.get(key)?.connection !== upstream) return;
          for (const listener of this.failureListeners) listener(connection, error);
        },
      },
    );
    this.pool.set(key, { connection: upstream, fingerprint, local: upstream });
    return upstream;
  }

  /** A local server's process as it is now (undefined until its first use). */
  localStatus(connection: PlaceConnection): LocalProcessStatus | undefined {
    const pooled = this.pool.get(keyOf(connection));
    return pooled?.fingerprint === fingerprintOf(connection) ? pooled.local?.status() : undefined;
  }

  /** Closes a removed connection's client (a local server's process ends, and its log is deleted). */
  async drop(connection: PlaceConnection): Promise<void> {
    const key = keyOf(connection);
    const pooled = this.pool.get(key);
    this.pool.delete(key);
    await pooled?.connection.close();
    if (connection.transport === 'stdio') new StderrLog(logPathOf(this.options.local.logDir, connection)).remove();
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
  if (fingerprint === undefined) {
    const where = connection.transport === 'stdio' ? connection.local : connection.url;
    fingerprints.set(connection, (fingerprint = JSON.stringify([where, connection.transport, connection.auth])));
  }
  return fingerprint;
}

function keyOf(connection: Pick<PlaceConnection, 'storeId' | 'name'>): string {
  return `${connection.storeId}/${connection.name}`;
}

/** `<logDir>/<store id>/<catalog id>.log`: each person's connections in each place apart. */
function logPathOf(logDir: string, connection: PlaceConnection): string {
  return join(logDir, connection.storeId, `${connection.catalogId}.log`);
}
