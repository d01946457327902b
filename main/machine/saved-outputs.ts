import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../state/process-alive.js';

/** How long a saved output is kept at most. */
export const SAVED_OUTPUT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** Default of the total size of one server's saved outputs (WORKSPACE_BASH_OUTPUT_MAX_MB). */
export const DEFAULT_SAVED_OUTPUT_TOTAL_MB = 1024;

/** The names this code gives: a server's folder, a place's folder in it, an output file in that. */
const SERVER_FOLDER = /^(\d+)-[0-9a-f]{8}$/;
const PLACE_FOLDER = /^place-[0-9a-f]{16}$/;
const OUTPUT_FILE = /^[0-9TZ-]+-[0-9a-f]{8}-(stdout|stderr|output)\.log$/;

/** The name of an output file: `id` is the runner's (time and random), unique per command. */
export function outputFileName(id: string, stream: 'stdout' | 'stderr' | 'output'): string {
  return `${id}-${stream}.log`;
}

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
 * keeps them in a folder of its own under one base folder, and in it each place in a folder of its
 * own (mode 0700): a place's sandbox shows only that one, read-only, at the path the answer names
 * (place-sandbox.ts), so no place reads or changes another's outputs. Nothing outlives its use: the
 * folder goes when the server stops; a sweep (at start, then hourly) removes what servers that are
 * gone left (a crash, a kill) and every file older than a day; the oldest files go first once this
 * server's files pass their total size.
 *
 * Agents under the machine policy can write here (they run as the app's user), so everything that
 * removes files trusts no name it finds: it never follows a link, removes only regular files of
 * this user with the names it gives, removes folders only when empty (rmdir), never leaves the
 * base folder, and says what it left alone.
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

  /**
   * The folder of the place whose root is `placeRoot` (`""`: This machine) in this server's
   * folder, made on first use (and again if a temp cleaner removed it).
   */
  async dir(placeRoot: string): Promise<string> {
    this.own ??= this.makeOwn().catch((error: unknown) => {
      this.own = undefined; // try again for the next command
      throw error;
    });
    const own = await this.own;
    const dir = join(own, placeFolderName(placeRoot));
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await checkPrivate(own);
    await checkPrivate(dir);
    return dir;
  }

  /** What an agent is told about how long a file saved now is kept. */
  retention(): string {
    const until = new Date(this.now() + this.maxAgeMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return `kept until ${until} at most: removed a day after it was saved, when this server stops, or sooner once newer saved outputs pass ${Math.round(this.maxTotalBytes / 1024 ** 2)} MB`;
  }

  /**
   * Removes what servers that no longer run left and, in every folder, the files older than the
   * maximum age (except `inUse`: files of commands still running here). Returns what it left
   * alone and why (a link, another user's file, a name it does not give).
   */
  async sweep(inUse: ReadonlySet<string> = new Set()): Promise<string[]> {
    const left: string[] = [];
    const base = await lstat(this.base).catch(() => undefined);
    if (!base) return left;
    if (!isPrivateFolder(base)) return [`${this.base}: not a private folder of this user (left alone, with all in it)`];
    const own = this.own && (await this.own.catch(() => undefined));
    for (const name of await readdir(this.base)) {
      const folder = join(this.base, name);
      const pid = SERVER_FOLDER.exec(name)?.[1];
      if (pid === undefined) left.push(`${folder}: not a name this app gives (left alone)`);
      if (pid === undefined || !(await isOwnFolder(folder, left))) continue;
      const gone = folder !== own && !processAlive(Number(pid));
      await this.sweepServer(
        folder,
        gone ? () => true : (file) => !inUse.has(file.path) && this.now() - file.mtimeMs > this.maxAgeMs,
        gone,
        left,
      );
    }
    return left;
  }

  /** Removes this server's oldest files until its total is under the limit, never `keep` (files in use, the ones just saved). */
  async trim(keep: ReadonlySet<string>): Promise<void> {
    const own = this.own && (await this.own.catch(() => undefined));
    if (!own) return;
    const files = await outputsOf(own, []);
    let total = files.reduce((sum, file) => sum + file.size, 0);
    for (const file of files.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
      if (total <= this.maxTotalBytes) return;
      if (keep.has(file.path)) continue;
      await unlink(file.path).catch(() => {});
      total -= file.size;
    }
  }

  /** Removes this server's files and folders (the server stops); returns what it left alone. */
  async removeOwn(): Promise<string[]> {
    const own = this.own;
    this.own = undefined;
    const dir = own && (await own.catch(() => undefined));
    const left: string[] = [];
    if (dir && (await isOwnFolder(dir, left))) await this.sweepServer(dir, () => true, true, left);
    return left;
  }

  /** In a server's folder: removes the output files `remove` picks and, when `whole`, the folders once empty. */
  private async sweepServer(folder: string, remove: (file: OutputFile) => boolean, whole: boolean, left: string[]): Promise<void> {
    for (const file of await outputsOf(folder, left)) if (remove(file)) await unlink(file.path).catch(() => {});
    if (!whole) return;
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (PLACE_FOLDER.test(name)) await removeEmpty(join(folder, name), left);
    }
    await removeEmpty(folder, left);
  }

  private async makeOwn(): Promise<string> {
    await mkdir(this.base, { recursive: true, mode: 0o700 });
    // The default base is in a temp dir every user may write to: use it only if it is this user's own
    // private folder, not a link or a folder someone else made to read the outputs.
    await checkPrivate(this.base);
    const dir = join(this.base, `${process.pid}-${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { mode: 0o700 });
    return dir;
  }
}

/** A place's folder name: a digest of its root, the same for every command of the place. */
export function placeFolderName(placeRoot: string): string {
  return `place-${createHash('sha256').update(`place:${placeRoot}`).digest('hex').slice(0, 16)}`;
}

interface OutputFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** The output files in a server's place folders: regular files of this user with the names the runner gives; anything else is noted in `left`. */
async function outputsOf(server: string, left: string[]): Promise<OutputFile[]> {
  const files: OutputFile[] = [];
  for (const name of await readdir(server).catch(() => [] as string[])) {
    const folder = join(server, name);
    if (!PLACE_FOLDER.test(name)) {
      left.push(`${folder}: not a name this app gives (left alone)`);
      continue;
    }
    if (!(await isOwnFolder(folder, left))) continue;
    for (const file of await readdir(folder).catch(() => [] as string[])) {
      const path = join(folder, file);
      const info = await lstat(path).catch(() => undefined);
      if (!info) continue;
      if (!OUTPUT_FILE.test(file)) left.push(`${path}: not a name this app gives (left alone)`);
      else if (!info.isFile()) left.push(`${path}: not a regular file (left alone)`);
      else if (!ownedByMe(info)) left.push(`${path}: another user's file (left alone)`);
      else files.push({ path, size: info.size, mtimeMs: info.mtimeMs });
    }
  }
  return files;
}

/** Whether `path` is a real folder (not a link) of this user; if not, says so in `left`. */
async function isOwnFolder(path: string, left: string[]): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  if (!info) return false;
  if (info.isDirectory() && ownedByMe(info)) return true;
  left.push(`${path}: ${info.isSymbolicLink() ? 'a link' : info.isDirectory() ? "another user's folder" : 'not a folder'} (left alone)`);
  return false;
}

/** rmdir: removes a folder only when empty, and never through a link. */
async function removeEmpty(path: string, left: string[]): Promise<void> {
  await rmdir(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT')
      left.push(
        `${path}: ${error.code === 'ENOTEMPTY' || error.code === 'EEXIST' ? 'holds files this app did not make' : error.message} (left alone)`,
      );
  });
}

function ownedByMe(info: { uid: number }): boolean {
  const uid = process.getuid?.();
  return uid === undefined || info.uid === uid;
}

function isPrivateFolder(info: { uid: number; mode: number; isDirectory(): boolean }): boolean {
  return info.isDirectory() && ownedByMe(info) && (info.mode & 0o077) === 0;
}

async function checkPrivate(path: string): Promise<void> {
  if (!isPrivateFolder(await lstat(path)))
    throw new Error(`${path} is not a private folder of this user; remove it so that it can be made again`);
}
