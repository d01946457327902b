import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { writeFileAtomic } from './atomic-write.js';
import { currentStamp, stampSince } from './file-stamp.js';
import { moveAside, parseStateJson, readAbsentStateFileSync, readAside, readStateFile } from './state-file-read.js';
import { withFileLock } from './file-lock.js';

/** A state file cannot be used; the message says what happened and what to do. */
export class StateFileError extends Error {
  override readonly name = 'StateFileError';
}

export interface VersionedJsonFileOptions<T> {
  path: string;
  /** The format version this app writes; a file with a higher one is refused, never moved aside. */
  version: number;
  /** The whole file, `version` included. */
  schema: z.ZodType<T>;
  /** What an absent file holds. */
  empty: T;
  /** Names the file in messages, e.g. "The access directory". */
  title: string;
}

/**
 * A file written within this long of a read may change again without changing its stat (coarse or
 * 2-second timestamps, a reused inode, the same size), so a read that recent is not trusted.
 */

interface Loaded<T> {
  stamp: string;
  /** The stamp alone proves the file unchanged since this load. */
  settled: boolean;
  outcome: { value: T } | { error: StateFileError };
}

/** Read-modify-write per file runs one at a time in this process, however many objects open it. */
const queues = new Map<string, Promise<unknown>>();

/**
 * A server-owned JSON file `{ version, ... }`, validated on load. Other processes (the CLI) write it
 * too, so every read first compares the file's identity (inode, size, times) with the last one read:
 * one `stat` when nothing changed, a re-read when something did.
 *
 * A corrupt file is moved aside to `<path>.corrupt-<time>` and the file stays refused, here and in
 * every other process, until someone fixes it and moves it back or deletes it: it is never silently
 * replaced by an empty one.
 */
export class VersionedJsonFile<T> {
  readonly path: string;
  private cache: Loaded<T> | undefined;
  private loading: Promise<Loaded<T>> | undefined;

  private readonly empty: T;

  constructor(private readonly options: VersionedJsonFileOptions<T>) {
    this.path = resolve(options.path);
    this.empty = deepFreeze(structuredClone(options.empty));
  }

  /** The file's content now, deeply frozen: it is shared with every other reader. */
  async read(): Promise<T> {
    for (;;) {
      const cached = this.cache;
      const stamp = cached?.settled ? stampSince(this.path, cached.stamp) : currentStamp(this.path);
      if (cached?.settled && cached.stamp === stamp) return unwrap(cached);
      // Still absent, in a folder changed moments ago: only an aside could differ, and a listing says.
      if (cached?.stamp === stamp && 'value' in cached.outcome && stamp.startsWith('absent:')) {
        const again = readAbsentStateFileSync(this.path);
        if (again && !again.aside) {
          this.cache = { stamp: again.stamp, settled: again.settled, outcome: { value: this.empty } };
          if (again.stamp === stamp) return this.empty;
          continue;
        }
      }
      this.loading ??= this.load().finally(() => (this.loading = undefined));
      const loaded = await this.loading;
      // A load that started before the file changed again is stale for this caller: look again.
      if (loaded.stamp === stamp) return unwrap(loaded);
    }
  }

  /**
   * Writes `change(current)` atomically, `current` being read afresh (other processes may have
   * written). Returning `current` itself writes nothing. Errors thrown by `change` write nothing.
   */
  update(change: (current: T) => T): Promise<T> {
    // The lock orders writers across processes (the CLI and the server); the queue within this one.
    const task = async (): Promise<T> => {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      return withFileLock(`${this.path}.lock`, () => this.write(change));
    };
    const run = (queues.get(this.path) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => {});
    queues.set(this.path, tail);
    void tail.then(() => {
      if (queues.get(this.path) === tail) queues.delete(this.path);
    });
    return run;
  }

  private async write(change: (current: T) => T): Promise<T> {
    const current = await this.read();
    const next = change(current);
    if (next === current) return current;
    // Never write what the next load would move aside.
    const checked = this.options.schema.parse(next);
    await writeFileAtomic(this.path, JSON.stringify(checked, null, 2) + '\n', { mode: 0o600 });
    this.cache = undefined;
    return deepFreeze(checked);
  }

  /** The file's stat identity, or the folder's while the file is absent (an aside may appear or go). */
  private async load(): Promise<Loaded<T>> {
    const read = await readStateFile(this.path);
    const { stamp, settled } = read;
    if ('absent' in read) {
      const outcome = read.aside ? { error: await this.asideError(read.aside) } : { value: this.empty };
      return (this.cache = { stamp, settled, outcome });
    }
    const parsed = this.parse(read.text);
    if ('problem' in parsed) {
      // Moves aside only the file actually read; either way, the re-read sees what is there now.
      await moveAside(this.path, stamp);
      return this.load();
    }
    return (this.cache = { stamp, settled, outcome: parsed });
  }

  /** Says what is wrong with the aside as it reads now (it may have been fixed but not moved back yet). */
  private async asideError(aside: string): Promise<StateFileError> {
    const text = await readAside(aside);
    const parsed = text === undefined ? undefined : this.parse(text);
    const detail = parsed && 'problem' in parsed ? ` (${parsed.problem})` : '';
    return new StateFileError(
      `${this.options.title} ${this.path} was moved to ${aside} because it was unreadable${detail}. ` +
        `It is refused until you fix that file and move it back to ${this.path}, or delete it to start from an empty one.`,
    );
  }

  /** The content, or what is wrong with it. */
  private parse(text: string): { value: T } | { problem: string } | { error: StateFileError } {
    const read = parseStateJson(text);
    if ('problem' in read) return read;
    const version = (read.json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > this.options.version) {
      const message = `${this.options.title} ${this.path} was written by a newer version of this app (format version ${version}). Update the app to use it.`;
      return { error: new StateFileError(message) };
    }
    const parsed = this.options.schema.safeParse(read.json);
    if (!parsed.success) return { problem: describeIssue(parsed.error.issues[0]) };
    return { value: deepFreeze(parsed.data) };
  }
}

/** Where in the file and what, e.g. `places["Crew/a"].readers[0]: a user id must be ...`. */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return 'the file: invalid';
  const where = issue.path
    .map((key, i) =>
      typeof key === 'number'
        ? `[${key}]`
        : typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)
          ? `${i ? '.' : ''}${key}`
          : `[${JSON.stringify(typeof key === 'symbol' ? key.description : key)}]`,
    )
    .join('');
  // A bad record key is reported as "Invalid key in record"; what is wrong with the key is inside.
  const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  return `${where || 'the file'}: ${message}`;
}

function unwrap<T>(loaded: Loaded<T>): T {
  if ('error' in loaded.outcome) throw loaded.outcome.error;
  return loaded.outcome.value;
}

function deepFreeze<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
