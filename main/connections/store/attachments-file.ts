import type { BigIntStats } from 'node:fs';
import { mkdir, open, readdir, readFile, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../state/atomic-write.js';
import { absentStamp, currentStamp, emptyIfAbsent, fileStamp, isNotFound, isSettled, statOrAbsent } from '../../state/file-stamp.js';
import { ConnectionStoreError } from './errors.js';
import { type FileLockOptions, withFileLock } from '../../state/file-lock.js';
import { isCatalogId, isPlaceRoot, isUserId, serverNameOf, storeIdOf } from './naming.js';

// An HTTP header field name (RFC 9110 token).
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const LINE_BREAK_OR_NUL = /[\r\n\0]/;

const authSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({
    kind: z.literal('header'),
    header: z.string().regex(HEADER_NAME, 'not an HTTP header name'),
    prefix: z.string().refine((prefix) => !LINE_BREAK_OR_NUL.test(prefix), 'no line breaks').optional(),
    /** The name of a project secret of the place; the value lives in the keychain. */
    secretName: z.string().min(1),
  }),
  z.object({ kind: z.literal('oauth') }),
]);

/** One connection as stored. Unknown fields are dropped, so nothing secret can ride along. */
export const connectionRecordSchema = z.object({
  name: z.string(),
  catalogId: z.string().refine(isCatalogId, 'not a catalog id ([a-z0-9-], at most 32)'),
  displayName: z.string().min(1),
  url: z.string().min(1),
  transport: z.enum(['streamable-http', 'sse']),
  auth: authSchema,
  addedAt: z.iso.datetime(),
});

const storeEntrySchema = z.object({
  owner: z.string().refine(isUserId, 'not a user id'),
  root: z.string().refine(isPlaceRoot, 'not a place root'),
  connections: z.record(z.string(), connectionRecordSchema),
});

const attachmentsSchema = z
  .object({ version: z.literal(1), stores: z.record(z.string(), storeEntrySchema) })
  .superRefine((file, context) => {
    // Ids and names are derived; one that does not match was edited and would misattribute a login.
    for (const [storeId, entry] of Object.entries(file.stores)) {
      // An invalid owner or root has its own issue already.
      if (!isUserId(entry.owner) || !isPlaceRoot(entry.root)) continue;
      if (storeIdOf(entry.owner, entry.root) !== storeId) {
        context.addIssue({ code: 'custom', path: ['stores', storeId], message: 'the store id does not match its owner and root' });
        continue;
      }
      for (const [key, record] of Object.entries(entry.connections)) {
        const expected = isCatalogId(record.catalogId) ? serverNameOf(storeId, record.catalogId) : record.name;
        if (key !== record.name || record.name !== expected) {
          context.addIssue({
            code: 'custom',
            path: ['stores', storeId, 'connections', key],
            message: 'the server name does not match its store and catalog id',
          });
        }
      }
    }
  });

export type ConnectionRecord = z.infer<typeof connectionRecordSchema>;
export type ConnectionAuth = ConnectionRecord['auth'];
/** `attachments.json`: every person's connections in every place, by store id. */
export type Attachments = z.infer<typeof attachmentsSchema>;

/**
 * The file's content as one read saw it. Generations grow with each read begun and each write done,
 * so of two snapshots the higher one is never older (a read sees the file as of its `open`).
 */
export interface Snapshot {
  generation: number;
  attachments: Attachments;
}

interface Loaded {
  generation: number;
  stamp: string;
  /** The stamp alone proves the file unchanged since this load. */
  settled: boolean;
  outcome: { attachments: Attachments } | { error: ConnectionStoreError };
}


/**
 * `<state>/personal-mcp/attachments.json`. Other processes (the CLI) write it too: reads compare the
 * file's identity (inode, size, times) with the last one read, so an unchanged file costs one
 * `stat`; changes go through `update`, under a lock file beside it, on a fresh read.
 *
 * An unreadable file is moved aside to `attachments.json.corrupt-<time>` and stays refused, here and
 * in every other process, until someone moves it back fixed or deletes it: never silently emptied.
 */
export class AttachmentsFile {
  readonly lockPath: string;
  private cache: Loaded | undefined;
  private generation = 0;

  constructor(
    readonly path: string,
    private readonly lockOptions: FileLockOptions = {},
  ) {
    this.lockPath = `${path}.lock`;
  }

  /** The current content; an absent file (with nothing moved aside) is empty. */
  async read(): Promise<Snapshot> {
    const stamp = currentStamp(this.path);
    const cached = this.cache;
    if (cached?.settled && cached.stamp === stamp) return unwrap(cached);
    const loaded = await this.load();
    if (!this.cache || loaded.generation > this.cache.generation) this.cache = loaded;
    return unwrap(loaded);
  }

  /**
   * Runs `change` on a fresh read under the lock (so no other process's change is lost) and writes
   * the content it returns. A `change` that throws writes nothing. Gives both contents it saw.
   */
  async update<T>(
    change: (current: Attachments) => [next: Attachments, result: T],
  ): Promise<{ result: T; before: Snapshot; after: Snapshot }> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    return withFileLock(
      this.lockPath,
      async () => {
        const before = unwrap(await this.load());
        // `change` may modify what it gets: a copy, never what `before` or the cache hold.
        const [next, result] = change(structuredClone(before.attachments));
        await writeFileAtomic(this.path, JSON.stringify(next, null, 2) + '\n', { mode: 0o600 });
        this.cache = undefined;
        return { result, before, after: { generation: ++this.generation, attachments: next } };
      },
      this.lockOptions,
    );
  }

  /** The file's stat identity, or its folder's while it is absent (an aside may appear or go). */
  private async load(): Promise<Loaded> {
    const generation = ++this.generation;
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return this.loadAbsent(generation);
    }
    let stats: BigIntStats;
    let text: string;
    try {
      // Stamp and content come from the same open file, so they always belong together.
      stats = await handle.stat({ bigint: true });
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const stamp = fileStamp(stats);
    const parsed = this.parse(text);
    if ('problem' in parsed) {
      // Move aside only the file actually read; if it was replaced meanwhile, read the new one.
      if ((currentStamp(this.path)) === stamp) await this.moveAside();
      return this.load();
    }
    return { generation, stamp, settled: isSettled(stats), outcome: parsed };
  }

  private async loadAbsent(generation: number): Promise<Loaded> {
    const dir = dirname(this.path);
    // The folder's stamp is taken before listing it, so a change in between only causes a re-read.
    const dirStats = await statOrAbsent(dir);
    const stamp = absentStamp(dirStats);
    const settled = dirStats === undefined || isSettled(dirStats);
    const aside = dirStats && (await this.newestAside(dir));
    const outcome = aside ? { error: await this.asideError(aside) } : { attachments: { version: 1 as const, stores: {} } };
    return { generation, stamp, settled, outcome };
  }

  /** The content, what is wrong with it, or why this app must not touch it. */
  private parse(text: string): { attachments: Attachments } | { problem: string } | { error: ConnectionStoreError } {
    let json: unknown;
    try {
      // A `__proto__` key would be dropped or change a prototype, never stored.
      json = JSON.parse(text, (key, value: unknown) => {
        if (key === '__proto__') throw new ProtoKeyError();
        return value;
      });
    } catch (error) {
      return { problem: error instanceof ProtoKeyError ? 'it contains a "__proto__" key' : 'it is not valid JSON' };
    }
    const version = (json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > 1) {
      const message =
        `The MCP connections file ${this.path} was written by a newer version of this app (format version ${version}). ` +
        'It was left as it is: update this app to use it.';
      return { error: new ConnectionStoreError(message, this.path) };
    }
    const parsed = attachmentsSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { problem: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}` };
    }
    return { attachments: parsed.data };
  }

  private async moveAside(): Promise<void> {
    const base = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    let aside = base;
    for (let n = 1; await statOrAbsent(aside); n++) aside = `${base}-${n}`;
    try {
      await rename(this.path, aside);
    } catch (error) {
      // Another reader moved it first; the reload finds that aside.
      if (!isNotFound(error)) throw error;
    }
  }

  private async newestAside(dir: string): Promise<string | undefined> {
    const prefix = `${basename(this.path)}.corrupt-`;
    const names = (await readdir(dir).catch(emptyIfAbsent)).filter((name) => name.startsWith(prefix)).sort();
    const newest = names.at(-1);
    return newest === undefined ? undefined : join(dir, newest);
  }

  /** Says what is wrong with the aside as it reads now (it may have been fixed but not moved back yet). */
  private async asideError(aside: string): Promise<ConnectionStoreError> {
    const text = await readFile(aside, 'utf8').catch(() => undefined);
    const parsed = text === undefined ? undefined : this.parse(text);
    const detail = parsed && 'problem' in parsed ? ` (${parsed.problem})` : '';
    return new ConnectionStoreError(
      `The MCP connections file ${this.path} was moved to ${aside} because it was unreadable${detail}. ` +
        `No place has MCP connections here until you fix that file and move it back to ${this.path}, ` +
        'or delete it to start with none.',
      this.path,
      aside,
    );
  }
}

class ProtoKeyError extends Error {}

function unwrap(loaded: Loaded): Snapshot {
  if ('error' in loaded.outcome) throw loaded.outcome.error;
  return { generation: loaded.generation, attachments: loaded.outcome.attachments };
}





