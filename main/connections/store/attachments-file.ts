import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../../state/atomic-write.js';
import { currentStamp } from '../../state/file-stamp.js';
import { moveAside, parseStateJson, readAside, readStateFile } from '../../state/state-file-read.js';
import { ConnectionStoreError } from './errors.js';
import { type FileLockOptions, withFileLock } from '../../state/file-lock.js';
import { localCommandSchema } from '../local/local-command.js';
import { isCatalogId, isPlaceRoot, isUserId, serverNameOf, storeIdOf } from './naming.js';

// An HTTP header field name (RFC 9110 token).
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const LINE_BREAK_OR_NUL = /[\r\n\0]/;

const authSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({
    kind: z.literal('header'),
    header: z.string().regex(HEADER_NAME, 'not an HTTP header name'),
    prefix: z
      .string()
      .refine((prefix) => !LINE_BREAK_OR_NUL.test(prefix), 'no line breaks')
      .optional(),
    /** The name of a project secret of the place; the value lives in the keychain. */
    secretName: z.string().min(1),
  }),
  z.object({
    kind: z.literal('oauth'),
    /** The person's own OAuth app at the provider, by its client id; its client secret, if any, lives in the keychain. */
    ownApp: z.object({ clientId: z.string().min(1).max(500) }).optional(),
    /** Machine credentials the owner set (the client-credentials grant), by client id and how it proves itself; the secret or key lives in the keychain. */
    clientCredentials: z.object({ clientId: z.string().min(1).max(500), method: z.enum(['client_secret', 'private_key_jwt']) }).optional(),
  }),
]);

const recordFields = {
  name: z.string(),
  catalogId: z.string().refine(isCatalogId, 'not a catalog id ([a-z0-9-], at most 32)'),
  displayName: z.string().min(1),
  /** Upstream tools its adder or an editor turned off: hidden from agents and refused. */
  disabledTools: z.array(z.string()).optional(),
  addedAt: z.iso.datetime(),
};

/** A remote server, reached over HTTP at its URL. */
const remoteRecordSchema = z.object({
  ...recordFields,
  url: z.string().min(1),
  transport: z.enum(['streamable-http', 'sse']),
  auth: authSchema,
});

/** A local server: a command this app runs and speaks to over stdio; its credentials are its environment. */
const localRecordSchema = z.object({
  ...recordFields,
  transport: z.literal('stdio'),
  local: localCommandSchema,
  auth: z.object({ kind: z.literal('none') }),
});

/** One connection as stored. Unknown fields are dropped, so nothing secret can ride along. */
export const connectionRecordSchema = z.discriminatedUnion('transport', [remoteRecordSchema, localRecordSchema]);

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
export type RemoteConnectionRecord = z.infer<typeof remoteRecordSchema>;
export type LocalConnectionRecord = z.infer<typeof localRecordSchema>;
export type ConnectionAuth = RemoteConnectionRecord['auth'];
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
    /** The time, to tell a settled file from one changed moments ago. */
    private readonly now: () => number = Date.now,
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
    const read = await readStateFile(this.path, this.now);
    const { stamp, settled } = read;
    if ('absent' in read) {
      const outcome = read.aside ? { error: await this.asideError(read.aside) } : { attachments: { version: 1 as const, stores: {} } };
      return { generation, stamp, settled, outcome };
    }
    const parsed = this.parse(read.text);
    if ('problem' in parsed) {
      // Moves aside only the file actually read; either way, the re-read sees what is there now.
      await moveAside(this.path, stamp);
      return this.load();
    }
    return { generation, stamp, settled, outcome: parsed };
  }

  /** The content, what is wrong with it, or why this app must not touch it. */
  private parse(text: string): { attachments: Attachments } | { problem: string } | { error: ConnectionStoreError } {
    const read = parseStateJson(text);
    if ('problem' in read) return read;
    const version = (read.json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > 1) {
      const message =
        `The MCP connections file ${this.path} was written by a newer version of this app (format version ${version}). ` +
        'It was left as it is: update this app to use it.';
      return { error: new ConnectionStoreError(message, this.path) };
    }
    const parsed = attachmentsSchema.safeParse(read.json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { problem: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}` };
    }
    return { attachments: parsed.data };
  }

  /** Says what is wrong with the aside as it reads now (it may have been fixed but not moved back yet). */
  private async asideError(aside: string): Promise<ConnectionStoreError> {
    const text = await readAside(aside);
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

function unwrap(loaded: Loaded): Snapshot {
  if ('error' in loaded.outcome) throw loaded.outcome.error;
  return { generation: loaded.generation, attachments: loaded.outcome.attachments };
}
