import type { PlaceConnection } from '../store/connection-store.js';
import { fingerprintOf, type Gateway } from './gateway.js';
import type { UpstreamTool } from './upstream-connection.js';
import { UpstreamUnavailableError } from './upstream-unavailable-error.js';
import type { UpstreamProblem } from './upstream-problem.js';

/**
 * The result of the last check of a connection's server: its tools, or why it does not work, or
 * that a person cancelled it before the server answered (nothing is known then; it is not checked
 * again on its own).
 */
export type Measured =
  | { kind: 'ok'; tools: readonly UpstreamTool[]; checkedAt: number }
  | { kind: 'failed'; problem: UpstreamProblem; reason: string; checkedAt: number; nextCheckAt: number; challenge?: string }
  | { kind: 'cancelled'; reason: string; checkedAt: number };

/** A connection's health as known now: the last check's result (none yet: never checked), and whether one runs. */
export interface Health {
  last: Measured | undefined;
  checking: boolean;
  /** When the check running now started. */
  checkingSince?: number;
  /** The server's last errors, newest last (a small log for the details view). */
  errors: readonly { at: number; message: string }[];
}

export interface ConnectionHealthOptions {
  gateway: Gateway;
  /** Wait before a failing server is checked again; doubles after each failure, up to maxBackoffMs. */
  firstBackoffMs: number;
  maxBackoffMs: number;
  now?: () => number;
}

const ERRORS_KEPT = 10;

interface Entry {
  connection: PlaceConnection;
  fingerprint: string;
  last: Measured | undefined;
  running: Promise<Measured> | undefined;
  /** Ends the check running now (its requests to the server). */
  abort: AbortController | undefined;
  since: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  errors: { at: number; message: string }[];
}

/**
 * What each connection's server answered when last asked (initialize + tools/list with the
 * connection's own credentials), so that every surface says what agents get. A check runs when
 * asked (add, connect, credentials changed, Test, first use) and after a request to the server
 * failed; a failing server is checked again on its own with backoff, never once per agent call.
 * Listeners hear of a place whose agents gain or lose tools.
 */
export class ConnectionHealth {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(root: string) => void>();
  private readonly stateListeners = new Set<(connection: PlaceConnection) => void>();
  private readonly now: () => number;
  private closed = false;

  constructor(private readonly options: ConnectionHealthOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The health of this record of the connection (a changed URL, transport or auth starts afresh). */
  health(connection: PlaceConnection): Health {
    const entry = this.entryOf(connection);
    return {
      last: entry.last,
      checking: entry.running !== undefined,
      ...(entry.running && { checkingSince: entry.since }),
      errors: entry.errors,
    };
  }

  /** Checks the server now (joining a check already running) and returns the result. */
  check(connection: PlaceConnection): Promise<Measured> {
    return this.measure(this.entryOf(connection), true);
  }

  /**
   * Checks the server for someone who asks after changing something (Test, a new secret): a check
   * running now began before the ask and may answer what the server said before the change, so it
   * is waited for and a new one made (asks at the same time share that one). If a person cancels
   * that check meanwhile, the ask hears the cancel and nothing more is asked of the server.
   */
  async checkAgain(connection: PlaceConnection): Promise<Measured> {
    const earlier = await this.entryOf(connection).running?.catch(() => undefined);
    if (earlier?.kind === 'cancelled') return earlier;
    return this.check(connection);
  }

  /** Starts a check of a connection that was never checked; the result comes to listeners. */
  ensureChecked(connection: PlaceConnection): void {
    const entry = this.entryOf(connection);
    if (!entry.last && !entry.running) void this.measure(entry, false);
  }

  /** Checks again a connection already known here, by its identity (a sign-in finished or ended). */
  recheck(identity: Pick<PlaceConnection, 'storeId' | 'name'>): void {
    const entry = this.entries.get(keyOf(identity));
    if (entry && !entry.running) void this.measure(entry, true);
  }

  /** A request to the server failed: check it, unless a check runs or a re-check is already due. */
  failed(connection: PlaceConnection, error: UpstreamUnavailableError): void {
    const entry = this.entryOf(connection);
    this.note(entry, error.message);
    if (!entry.running && !entry.timer) void this.measure(entry, true);
  }

  /** The server said its tools changed: list them again on the open session. */
  toolsChanged(connection: PlaceConnection): void {
    const entry = this.entryOf(connection);
    if (!entry.running) void this.measure(entry, false);
  }

  /**
   * Cancels the check of the connection running now, if one runs: its requests to the server end,
   * and its result is "cancelled" until it is checked again. Resolves once that is its state.
   */
  async cancel(connection: Pick<PlaceConnection, 'storeId' | 'name'>): Promise<void> {
    const entry = this.entries.get(keyOf(connection));
    if (!entry?.running) return;
    entry.abort?.abort();
    await entry.running.catch(() => {});
  }

  /** Forgets a removed connection and stops its re-checks. */
  forget(connection: Pick<PlaceConnection, 'storeId' | 'name'>): void {
    const key = keyOf(connection);
    clearTimeout(this.entries.get(key)?.timer);
    this.entries.get(key)?.abort?.abort();
    this.entries.delete(key);
  }

  /** Hears of places whose agents gain or lose tools of a connection. */
  onChange(listener: (root: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears each check of a connection start and end: what every surface shows of it changes then. */
  onState(listener: (connection: PlaceConnection) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Stops every re-check, and ends the checks running (shutdown does not wait for a server that never answers). */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) {
      clearTimeout(entry.timer);
      entry.abort?.abort();
    }
    this.entries.clear();
  }

  private entryOf(connection: PlaceConnection): Entry {
    const key = keyOf(connection);
    const fingerprint = fingerprintOf(connection);
    let entry = this.entries.get(key);
    if (entry?.fingerprint === fingerprint) {
      entry.connection = connection;
      return entry;
    }
    if (entry) clearTimeout(entry.timer);
    // A changed record is measured afresh; its log of errors stays, as the story of the same connection.
    entry = {
      connection,
      fingerprint,
      last: undefined,
      running: undefined,
      abort: undefined,
      since: 0,
      failures: 0,
      timer: undefined,
      errors: entry?.errors ?? [],
    };
    this.entries.set(key, entry);
    return entry;
  }

  /** One check at a time per connection; `fresh` opens a new session, else the open one lists its tools. */
  private measure(entry: Entry, fresh: boolean): Promise<Measured> {
    if (entry.running) return entry.running;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const abort = new AbortController();
    const run = (async (): Promise<Measured> => {
      const upstream = await this.options.gateway.upstream(entry.connection);
      const before = entry.last;
      let result: Measured;
      try {
        const { signal } = abort;
        const tools = await untilAborted(fresh ? upstream.check(signal) : upstream.tools(signal), signal);
        entry.failures = 0;
        // A name listed twice is passed on once, the first (upstream-listing.ts): tool names must be unique.
        result = { kind: 'ok', tools, checkedAt: this.now() };
      } catch (error) {
        result = abort.signal.aborted ? this.cancelled(entry) : this.failure(entry, error);
      }
      entry.last = result;
      if (this.entries.get(keyOf(entry.connection)) === entry && toolsDiffer(before, result)) {
        for (const listener of this.listeners) listener(entry.connection.root);
      }
      return result;
    })().finally(() => {
      entry.running = undefined;
      entry.abort = undefined;
      this.tellState(entry);
    });
    entry.running = run;
    entry.abort = abort;
    entry.since = this.now();
    this.tellState(entry);
    return run;
  }

  /** A person cancelled the check: nothing was learnt, and nothing is checked again on its own. */
  private cancelled(entry: Entry): Measured {
    const seconds = Math.round((this.now() - entry.since) / 1000);
    return {
      kind: 'cancelled',
      reason: `The check was cancelled after ${seconds} s, before the server answered. Retry to ask it again.`,
      checkedAt: this.now(),
    };
  }

  /** The server could not be used: why, and when it is checked again (backing off). */
  private failure(entry: Entry, error: unknown): Measured {
    if (!(error instanceof UpstreamUnavailableError)) throw error;
    entry.failures += 1;
    this.note(entry, error.message);
    const wait = Math.min(this.options.firstBackoffMs * 2 ** (entry.failures - 1), this.options.maxBackoffMs);
    this.scheduleRecheck(entry, wait);
    return {
      kind: 'failed',
      problem: error.problem,
      reason: error.message,
      checkedAt: this.now(),
      nextCheckAt: this.now() + wait,
      ...(error.challenge && { challenge: error.challenge }),
    };
  }

  private scheduleRecheck(entry: Entry, wait: number): void {
    // A connection forgotten (or whose record changed) while it was being checked is not checked again.
    if (this.closed || this.entries.get(keyOf(entry.connection)) !== entry) return;
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (this.entries.get(keyOf(entry.connection)) === entry) void this.measure(entry, true);
    }, wait);
    // Never what keeps the process alive.
    entry.timer.unref();
  }

  private tellState(entry: Entry): void {
    if (this.entries.get(keyOf(entry.connection)) !== entry) return;
    for (const listener of this.stateListeners) listener(entry.connection);
  }

  private note(entry: Entry, message: string): void {
    if (entry.errors.at(-1)?.message === message) return;
    entry.errors.push({ at: this.now(), message });
    if (entry.errors.length > ERRORS_KEPT) entry.errors.shift();
  }
}

/** The work's result, unless the signal aborts first (the work is then left to end on its own, its outcome unheard). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener('abort', aborted, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', aborted));
  });
}

/** Whether agents see different tools after this check: a connection went away, came back, or changed its list. */
function toolsDiffer(before: Measured | undefined, after: Measured): boolean {
  const toolsOf = (m: Measured | undefined) => (m?.kind === 'ok' ? JSON.stringify(m.tools) : undefined);
  return toolsOf(before) !== toolsOf(after);
}

function keyOf(connection: Pick<PlaceConnection, 'storeId' | 'name'>): string {
  return `${connection.storeId}/${connection.name}`;
}
