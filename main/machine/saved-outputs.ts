import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../state/process-alive.js';

/** How long a saved output is kept at most. */
export const SAVED_OUTPUT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** Default of the total size of one server's saved outputs (WORKSPACE_BASH_OUTPUT_MAX_MB). */
export const DEFAULT_SAVED_OUTPUT_TOTAL_MB = 1024;

export interface SavedOutputsOptions {
  /** The folder every server of this user saves under, each in a folder of its own; default one in the OS temp dir. */
  base?: string;
  /** Most bytes this server's saved outputs take together; the oldest go first. */
  maxTotalBytes: number;
  maxAgeMs?: number;
  now?: () => number;
}

/**
 * The full outputs of bash commands too big to return, as files an agent can read. Each server
 * keeps them in a folder of its own under one base folder, and nothing outlives its use: the folder
 * goes when the server stops; a sweep (at start, then hourly) removes the folders of servers that
 * are gone (a crash, a kill) and every file older than a day; and the oldest files go first once
 * this server's files pass their total size.
 */
export class SavedOutputs {
  readonly base: string;
  readonly maxTotalBytes: number;
  readonly maxAgeMs: number;
  private readonly now: () => number;
  private own: Promise<string> | undefined;

  constructor(options: SavedOutputsOptions) {
    this.base = options.base ?? join(tmpdir(), `persona-workspace-output-${process.getuid?.() ?? 'user'}`);
    this.maxTotalBytes = options.maxTotalBytes;
    this.maxAgeMs = options.maxAgeMs ?? SAVED_OUTPUT_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
  }

  /** This server's folder, made on first use (and again if a temp cleaner removed it). */
  async dir(): Promise<string> {
    this.own ??= this.makeOwn().catch((error: unknown) => {
      this.own = undefined; // try again for the next command
      throw error;
    });
    const dir = await this.own;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /** What an agent is told about how long a file saved now is kept. */
  retention(): string {
    const until = new Date(this.now() + this.maxAgeMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return `kept until ${until} at most: removed a day after it was saved, when this server stops, or sooner once newer saved outputs pass ${Math.round(this.maxTotalBytes / 1024 ** 2)} MB`;
  }

  /**
   * Removes the folders of servers that no longer run and, in every folder, the files older than
   * the maximum age (except `inUse`: files of commands still running here).
   */
  async sweep(inUse: ReadonlySet<string> = new Set()): Promise<void> {
    const own = this.own && (await this.own.catch(() => undefined));
    for (const name of await readdir(this.base).catch(() => [] as string[])) {
      const folder = join(this.base, name);
      if (folder !== own && !ownerRuns(name)) {
        await rm(folder, { recursive: true, force: true });
        continue;
      }
      for (const file of await filesOf(folder)) {
        if (!inUse.has(file.path) && this.now() - file.mtimeMs > this.maxAgeMs) await rm(file.path, { force: true });
      }
    }
  }

  /** Removes this server's oldest files until its total is under the limit, never `keep` (files in use, the ones just saved). */
  async trim(keep: ReadonlySet<string>): Promise<void> {
    const own = this.own && (await this.own.catch(() => undefined));
    if (!own) return;
    const files = await filesOf(own);
    let total = files.reduce((sum, file) => sum + file.size, 0);
    for (const file of files.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
      if (total <= this.maxTotalBytes) return;
      if (keep.has(file.path)) continue;
      await rm(file.path, { force: true });
      total -= file.size;
    }
  }

  /** Removes this server's folder and all in it (the server stops). */
  async removeOwn(): Promise<void> {
    const own = this.own;
    this.own = undefined;
    const dir = own && (await own.catch(() => undefined));
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  private async makeOwn(): Promise<string> {
    await mkdir(this.base, { recursive: true, mode: 0o700 });
    // The default base is in a temp dir every user may write to: use it only if it is this user's own
    // private folder, not a link or a folder someone else made to read the outputs.
    const info = await lstat(this.base);
    const uid = process.getuid?.();
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o077) !== 0) {
      throw new Error(`${this.base} is not a private folder of this user; remove it so that it can be made again`);
    }
    const dir = join(this.base, `${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { mode: 0o700 });
    return dir;
  }
}

/** Whether the server that owns a folder (named `<pid>-<random>`) still runs. */
function ownerRuns(folderName: string): boolean {
  const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(folderName)?.[1]);
  return Number.isInteger(pid) && pid > 0 && processAlive(pid);
}

async function filesOf(folder: string): Promise<Array<{ path: string; size: number; mtimeMs: number }>> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const files = await Promise.all(
    names.map(async (name) => {
      const path = join(folder, name);
      const info = await stat(path).catch(() => undefined);
      return info?.isFile() ? { path, size: info.size, mtimeMs: info.mtimeMs } : undefined;
    }),
  );
  return files.filter((file) => file !== undefined);
}
