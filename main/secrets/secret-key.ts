import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../state/atomic-write.js';
import { SecretStoreError } from './secret-store.js';

export const SECRET_KEY_BYTES = 32;
export const SECRET_KEY_FILE = 'secrets.key';
export const SECRET_KEY_ENV = 'WORKSPACE_SECRET_KEY';

/** The encrypted-file store's AES-256 key and where it came from (for messages; never the key itself). */
export interface SecretKey {
  bytes: Buffer;
  source: string;
}

const HOW_TO_MAKE_ONE = 'Generate one with `openssl rand -base64 32`.';

/** 32 bytes written as 64 hex digits or as base64 (standard or URL-safe, padding optional). */
export function parseSecretKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  // 43 base64 characters are 32 bytes; Node's decoder reads both alphabets.
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  return undefined;
}

/** The key from WORKSPACE_SECRET_KEY; the message never repeats the text. */
export function secretKeyFromEnv(text: string): SecretKey {
  const bytes = parseSecretKey(text);
  if (!bytes) {
    throw new SecretStoreError(`${SECRET_KEY_ENV} is not a ${SECRET_KEY_BYTES}-byte key in base64 or hex. ${HOW_TO_MAKE_ONE}`);
  }
  return { bytes, source: SECRET_KEY_ENV };
}

/** Names a key in the file it encrypts, so a different key is told apart from damaged entries; reveals nothing of it. */
export function secretKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('persona-mcp-workspace secret store key id').digest('hex').slice(0, 16);
}

/** The key in `<stateDir>/secrets.key` (the same text WORKSPACE_SECRET_KEY would hold), or undefined when there is none. */
export async function readKeyFile(stateDir: string): Promise<SecretKey | undefined> {
  const path = join(stateDir, SECRET_KEY_FILE);
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  // A key others could read may already be copied: refuse rather than quietly tighten the mode.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new SecretStoreError(
      `The secret key ${path} is readable by other users (mode ${(mode & 0o777).toString(8).padStart(4, '0')}). ` +
        `Run \`chmod 600 ${path}\`; if someone else may have read it, treat the secrets it protects as exposed and replace them at their source.`,
    );
  }
  const bytes = parseSecretKey(await readFile(path, 'utf8'));
  if (!bytes) {
    throw new SecretStoreError(
      `The secret key ${path} does not hold a ${SECRET_KEY_BYTES}-byte key in base64 or hex. Restore the key the secrets were written with.`,
    );
  }
  return { bytes, source: path };
}

/** Creates `<stateDir>/secrets.key`, mode 0600, unless another process just did; returns the key in place. */
export async function createKeyFile(stateDir: string): Promise<SecretKey> {
  // Two processes may start at once: each writes a key under a private name and hard-links it into
  // place; the link fails for all but one, so every process ends up with the same key.
  const path = join(stateDir, SECRET_KEY_FILE);
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.new`;
  await writeFileAtomic(temp, `${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
  try {
    await link(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
  const key = await readKeyFile(stateDir);
  if (!key) throw new SecretStoreError(`The secret key ${path} disappeared right after it was created.`);
  return key;
}
