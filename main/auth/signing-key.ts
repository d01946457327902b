import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../state/atomic-write.js';
import { isNotFound } from '../state/file-stamp.js';

/** Where the app's HS256 key for its own agent tokens comes from: the secret store, or (before it) a file. */
export interface SigningKeySource {
  /** The key bytes, created on first use. */
  load(): Promise<Uint8Array>;
}

export const SIGNING_KEY_BYTES = 32;
export const SIGNING_KEY_FILE = 'agent-signing-key';

/** The key cannot be used as it is; the message says what to do. */
export class SigningKeyError extends Error {
  override readonly name = 'SigningKeyError';
}

/** The `kid` the app's tokens carry: names the key without revealing it. */
export function keyIdOf(key: Uint8Array): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** The key as raw bytes in `<stateDir>/agent-signing-key`, mode 0600. */
export class FileSigningKeySource implements SigningKeySource {
  readonly path: string;

  constructor(private readonly stateDir: string) {
    this.path = join(stateDir, SIGNING_KEY_FILE);
  }

  async load(): Promise<Uint8Array> {
    const existing = await this.loadExisting();
    if (existing) return existing;
    await this.create();
    const created = await this.loadExisting();
    if (!created) throw new SigningKeyError(`The agent signing key ${this.path} disappeared right after it was created.`);
    return created;
  }

  /** The key if the file exists (checked as `load` checks it), without creating one: what a migration moves. */
  async loadExisting(): Promise<Uint8Array | undefined> {
    let mode: number;
    try {
      mode = (await stat(this.path)).mode;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    // A key others could read may already be copied: refuse rather than quietly tighten the mode,
    // so the owner decides whether to rotate it.
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      throw new SigningKeyError(
        `The agent signing key ${this.path} is readable by other users (mode ${(mode & 0o777).toString(8).padStart(4, '0')}). ` +
          `Run \`chmod 600 ${this.path}\`; if someone else may have read it, delete it instead and create new agent tokens.`,
      );
    }
    const key = new Uint8Array(await readFile(this.path));
    if (key.length !== SIGNING_KEY_BYTES) {
      throw new SigningKeyError(
        `The agent signing key ${this.path} has ${key.length} bytes instead of ${SIGNING_KEY_BYTES}. ` +
          'Delete it to have a new one created; agent tokens created before will stop working.',
      );
    }
    return key;
  }

  private async create(): Promise<void> {
    // Two processes may start at once (server and CLI): write the key under a private name, then
    // hard-link it into place, which fails if the other one won, so nobody overwrites a key in use.
    const temp = `${this.path}.${randomBytes(6).toString('hex')}.new`;
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(temp, randomBytes(SIGNING_KEY_BYTES), { mode: 0o600 });
    try {
      await link(temp, this.path);
      await syncDir(this.stateDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(temp).catch(() => {});
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  // Makes the new link durable, so a crash cannot bring back a state without the key.
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => {});
  await handle.close();
}
