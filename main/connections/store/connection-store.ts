import { join } from 'node:path';
import {
  type Attachments,
  AttachmentsFile,
  type ConnectionRecord,
  connectionRecordSchema,
  type LocalConnectionRecord,
  type RemoteConnectionRecord,
  type Snapshot,
} from './attachments-file.js';
import { ConnectionExistsError, ConnectionInputError, ConnectionNotFoundError, describePlace } from './errors.js';
import type { FileLockOptions } from '../../state/file-lock.js';
import { assertPlaceRoot, serverNameOf, storeIdOf } from './naming.js';
import { changedRoots, rootDigests } from './root-changes.js';

export type { ConnectionAuth, ConnectionRecord } from './attachments-file.js';

type Placed = { owner: string; storeId: string; root: string };
/** A connection of a place, with whose login it uses. */
export type PlaceConnection = ConnectionRecord & Placed;
export type RemoteConnection = RemoteConnectionRecord & Placed;
export type LocalConnection = LocalConnectionRecord & Placed;

/** Omit over each member of a union (plain Omit keeps only the keys all members share). */
export type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What the add route knows: the caller, the place and the connection; the name and time are made here. */
export type AddConnectionInput = { owner: string; root: string } & OmitEach<ConnectionRecord, 'name' | 'addedAt'>;

/** What a change may set; the record that results must still be a whole remote or local connection. */
export type ConnectionPatch = Partial<Pick<RemoteConnectionRecord, 'displayName' | 'url' | 'transport' | 'auth' | 'disabledTools'>> &
  Partial<Pick<LocalConnectionRecord, 'local'>>;

/** A remote connection that signs in with OAuth. */
export function isOAuth(connection: PlaceConnection): connection is RemoteConnection & { auth: { kind: 'oauth' } } {
  return connection.transport !== 'stdio' && connection.auth.kind === 'oauth';
}

export type ChangeListener = (roots: string[]) => void;

export interface ConnectionStoreOptions {
  stateDir: string;
  /** How often `watch()` looks for other processes' writes (default 1000 ms). */
  pollIntervalMs?: number;
  lock?: FileLockOptions;
}

/**
 * Every place's MCP connections, one set per (person, place), in `<state>/personal-mcp/attachments.json`.
 * Holds no secrets: an OAuth login or header secret lives in the keychain, named by the record.
 */
export class ConnectionStore {
  readonly path: string;
  private readonly file: AttachmentsFile;
  private readonly pollIntervalMs: number;
  private readonly listeners = new Set<ChangeListener>();
  // Changes run one at a time in this process; the lock file orders them across processes.
  private queue: Promise<unknown> = Promise.resolve();
  // The connection sets last told to listeners (or first seen), and which read they came from.
  private seen: { generation: number; digests: Map<string, string> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** Each content's lists by place root (a content is replaced, never changed, when the file changes). */
  private readonly lists = new WeakMap<Attachments, Map<string, readonly PlaceConnection[]>>();

  constructor(options: ConnectionStoreOptions) {
    this.path = join(options.stateDir, 'personal-mcp', 'attachments.json');
    this.file = new AttachmentsFile(this.path, options.lock);
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /** Adds a connection with `owner`'s login to the place at `root`; one per person, place and catalog id. */
  async add(input: AddConnectionInput): Promise<PlaceConnection> {
    const { owner, root, ...fields } = input;
    const storeId = storeIdOf(owner, root);
    const name = serverNameOf(storeId, fields.catalogId);
    const parsed = connectionRecordSchema.safeParse({ ...fields, name, addedAt: new Date().toISOString() });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConnectionInputError(
        `Cannot add ${fields.catalogId}: ${issue?.path.join('.') || 'the connection'}: ${issue?.message ?? 'invalid'}.`,
      );
    }
    const record = parsed.data;
    return this.change((current) => {
      const entry = current.stores[storeId];
      if (entry && (entry.owner !== owner || entry.root !== root)) {
        // `place:<user>:<root>` reads the same for user `a` in `b:c` as for user `a:b` in `c`.
        throw new ConnectionInputError(
          `The connections of ${owner} in ${describePlace(root)} cannot be stored: their store id is already used by ` +
            `${entry.owner} in ${describePlace(entry.root)}. A place path without ":" avoids this.`,
        );
      }
      const existing = entry?.connections[name];
      if (existing) {
        throw new ConnectionExistsError(
          `${owner} already added ${existing.displayName} (${record.catalogId}) to ${describePlace(root)}. ` +
            'Remove that connection first to add it again.',
        );
      }
      const clash = Object.values(current.stores).find((other) => other.root === root && other.connections[name]);
      if (clash) {
        throw new ConnectionExistsError(
          `The server name ${name} is already used in ${describePlace(root)} by a connection of ${clash.owner} ` +
            '(two store ids share their first 8 hex digits). Add this server under another id.',
        );
      }
      current.stores[storeId] = { owner, root, connections: { ...entry?.connections, [name]: record } };
      return [current, { ...record, owner, storeId, root }];
    });
  }

  /**
   * Changes `owner`'s connection `name` in the place at `root` in place (its name, login and
   * secrets stay): its display name, URL, transport or credentials.
   */
  async update({ root, name, owner }: { root: string; name: string; owner: string }, patch: ConnectionPatch): Promise<PlaceConnection> {
    const storeId = storeIdOf(owner, root);
    return this.change((current) => {
      const { entry, record } = ownedConnection(current, storeId, { root, name, owner });
      const parsed = connectionRecordSchema.safeParse({ ...record, ...patch });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ConnectionInputError(
          `Cannot change ${record.displayName}: ${issue?.path.join('.') || 'the connection'}: ${issue?.message ?? 'invalid'}.`,
        );
      }
      entry.connections[name] = parsed.data;
      return [current, { ...parsed.data, owner, storeId, root }];
    });
  }

  /** Removes `owner`'s connection `name` from the place at `root` (who may do so is the caller's check). */
  async remove({ root, name, owner }: { root: string; name: string; owner: string }): Promise<PlaceConnection> {
    const storeId = storeIdOf(owner, root);
    return this.change((current) => {
      const { entry, record } = ownedConnection(current, storeId, { root, name, owner });
      delete entry.connections[name];
      if (Object.keys(entry.connections).length === 0) delete current.stores[storeId];
      return [current, { ...record, owner, storeId, root }];
    });
  }

  /**
   * Every person's connections in the place at `root`, by display name, then owner. Asked on every
   * agent call: the list is made once per content of the file and shared, frozen.
   */
  async list(root: string): Promise<readonly PlaceConnection[]> {
    assertPlaceRoot(root);
    const attachments = await this.current();
    let byRoot = this.lists.get(attachments);
    if (!byRoot) this.lists.set(attachments, (byRoot = new Map()));
    let connections = byRoot.get(root);
    if (!connections) byRoot.set(root, (connections = listOf(attachments, root)));
    return connections;
  }

  /** The place's connection named `name`, whoever added it. */
  async get(root: string, name: string): Promise<PlaceConnection | undefined> {
    // A server name is unique within a place (add refuses a clash), so at most one matches.
    return (await this.list(root)).find((c) => c.name === name);
  }

  /** The roots of the places that have connections, sorted. */
  async roots(): Promise<string[]> {
    const { stores } = await this.current();
    const roots = Object.values(stores)
      .filter((entry) => Object.keys(entry.connections).length > 0)
      .map((entry) => entry.root);
    return [...new Set(roots)].sort();
  }

  /**
   * Calls `listener` with the roots whose connection sets changed: after this store's own changes,
   * and when it sees another process's (on `list`/`get`/`roots`, or the poll of `watch()`).
   * A listener that throws does not stop the others; its error is rethrown on its own (uncaught).
   * Returns a function that removes the listener.
   */
  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Looks for other processes' changes every `pollIntervalMs` until `close()`. Resolves once the
   * current content is read, the baseline that later changes are told against (rejects, still
   * watching, when the file is unusable).
   */
  async watch(): Promise<void> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.pollIntervalMs);
      // Never what keeps the process alive.
      this.timer.unref();
    }
    await this.current();
  }

  /** Stops the polling of `watch()`. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async current(): Promise<Attachments> {
    const snapshot = await this.file.read();
    this.observe(snapshot);
    return snapshot.attachments;
  }

  private change<T>(modify: (current: Attachments) => [Attachments, T]): Promise<T> {
    const run = this.queue.then(async () => {
      const { result, before, after } = await this.file.update(modify);
      // `before` is the baseline when nothing was read yet (and shows another process's change).
      this.observe(before);
      this.observe(after);
      return result;
    });
    this.queue = run.catch(() => {});
    return run;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const snapshot = await this.file.read();
      // A look begun before `close()` tells nothing after it.
      if (this.timer) this.observe(snapshot);
    } catch {
      // An unusable file stays refused: the next list, get or change reports it to its caller.
    } finally {
      this.polling = false;
    }
  }

  /** Tells listeners which roots differ from the last content seen; older reads than that are ignored. */
  private observe(snapshot: Snapshot): void {
    if (this.seen && snapshot.generation <= this.seen.generation) return;
    const digests = rootDigests(snapshot.attachments);
    const before = this.seen?.digests;
    this.seen = { generation: snapshot.generation, digests };
    if (!before) return;
    const roots = changedRoots(before, digests);
    if (roots.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener([...roots]);
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

const byDisplayName = new Intl.Collator('en', { sensitivity: 'base' });

function listOf({ stores }: Attachments, root: string): readonly PlaceConnection[] {
  const connections: PlaceConnection[] = [];
  for (const [storeId, entry] of Object.entries(stores)) {
    if (entry.root !== root) continue;
    for (const record of Object.values(entry.connections))
      connections.push(Object.freeze({ ...record, owner: entry.owner, storeId, root }));
  }
  connections.sort(
    (a, b) =>
      byDisplayName.compare(a.displayName, b.displayName) ||
      compare(a.displayName, b.displayName) ||
      compare(a.owner, b.owner) ||
      compare(a.name, b.name),
  );
  return Object.freeze(connections);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `owner`'s connection `name` in the place at `root`, with its store entry; not found is an error. */
function ownedConnection(current: Attachments, storeId: string, { root, name, owner }: { root: string; name: string; owner: string }) {
  const entry = current.stores[storeId];
  const record = entry?.owner === owner && entry.root === root ? entry.connections[name] : undefined;
  if (!entry || !record) {
    throw new ConnectionNotFoundError(`${describePlace(root)} has no MCP connection ${name} added by ${owner}.`);
  }
  return { entry, record };
}
