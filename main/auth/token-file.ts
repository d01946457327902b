import { statSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from '../state/atomic-write.js';
import { withFileLock } from '../state/file-lock.js';
import { fileStamp, isNotFound } from '../state/file-stamp.js';

const tokenRecordSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  name: z.string().min(1),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().optional(),
  workspacePath: z.string().min(1).optional(),
  revokedAt: z.iso.datetime().optional(),
  /** Whether agents with this token get tool search; absent follows the place (`auto`). */
  toolSearch: z.enum(['on', 'off']).optional(),
});

const tokenFileSchema = z.object({
  version: z.literal(1),
  tokens: z.array(tokenRecordSchema),
});

/** What the store keeps about an agent token: never the token itself. */
export type TokenRecord = z.infer<typeof tokenRecordSchema>;

/** The token store file cannot be used; the message says what happened and what to do. */
export class TokenStoreError extends Error {
  override readonly name = 'TokenStoreError';
}

interface Snapshot {
  stamp: string;
  records: ReadonlyMap<string, TokenRecord>;
}

const ABSENT = 'absent';

/**
 * `agent-tokens.json`: `{ version: 1, tokens: [...] }`. Other processes (the CLI) write it too, so
 * every read first compares the file's identity (inode, size, times) with the last one read: one
 * `stat` when nothing changed, a re-read when something did; and every change is made under a lock
 * file that all processes take, on a fresh read.
 */
export class TokenFile {
  private cache: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;

  constructor(readonly path: string) {}

  /** The records as the file holds them now; an absent file holds none. */
  async records(): Promise<ReadonlyMap<string, TokenRecord>> {
    for (;;) {
      const stamp = this.currentStamp();
      if (this.cache?.stamp === stamp) return this.cache.records;
      this.loading ??= this.load().finally(() => (this.loading = undefined));
      const loaded = await this.loading;
      // A load that started before the file changed again is stale for this caller: look again.
      if (loaded.stamp === stamp) return loaded.records;
    }
  }

  /**
   * Runs `task` under the lock shared with every other process, with the records read afresh inside
   * it; `write` replaces them. Without the lock, a CLI revocation could be overwritten by the
   * server's next write made from an older read.
   */
  async update<T>(
    task: (records: ReadonlyMap<string, TokenRecord>, write: (records: Iterable<TokenRecord>) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    return withFileLock(`${this.path}.lock`, async () => task((await this.load()).records, (records) => this.write(records)));
  }

  private async write(records: Iterable<TokenRecord>): Promise<void> {
    const body = JSON.stringify({ version: 1, tokens: [...records] }, null, 2) + '\n';
    await writeFileAtomic(this.path, body, { mode: 0o600 });
    this.cache = undefined;
  }

  /**
   * Synchronous on purpose: it runs on every authenticated request, and a `stat` of this file in
   * our own state dir takes a few microseconds, where an async one is a round trip through the
   * thread pool (tens of microseconds and two thread switches). Still a fresh `stat` every time, so
   * a revocation written by another process is seen by the very next request.
   */
  private currentStamp(): string {
    const stats = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    return stats ? fileStamp(stats) : ABSENT;
  }

  private async load(): Promise<Snapshot> {
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return (this.cache = { stamp: ABSENT, records: new Map() });
    }
    let stamp: string;
    let text: string;
    try {
      // Stamp and content come from the same open file, so they always belong together.
      stamp = fileStamp(await handle.stat({ bigint: true }));
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const parsed = this.parse(text);
    if (typeof parsed === 'string') {
      // Move aside only the file actually read; if it was replaced meanwhile, read the new one.
      if (this.currentStamp() !== stamp) return this.load();
      return this.quarantine(parsed);
    }
    return (this.cache = { stamp, records: parsed });
  }

  /** The records, or what is wrong with the file. */
  private parse(text: string): Map<string, TokenRecord> | string {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return 'it is not valid JSON';
    }
    const version = (json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > 1) {
      throw new TokenStoreError(
        `${this.path} was written by a newer version of this app (format version ${version}). Update the app to use it.`,
      );
    }
    const parsed = tokenFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}`;
    }
    return new Map(parsed.data.tokens.map((record) => [record.id, record]));
  }

  private async quarantine(problem: string): Promise<never> {
    const aside = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(this.path, aside);
    throw new TokenStoreError(
      `The agent token store ${this.path} was unreadable (${problem}) and was moved to ${aside}. ` +
        'All agent tokens are refused until you create new ones, or fix that file and move it back.',
    );
  }
}
