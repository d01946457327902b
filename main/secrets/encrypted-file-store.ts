import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../state/atomic-write.js';
import {
  createKeyFile,
  readKeyFile,
  SECRET_KEY_ENV,
  SECRET_KEY_FILE,
  secretKeyFromEnv,
  secretKeyId,
  type SecretKey,
} from './secret-key.js';
import { checkAccount, checkPrefix, checkValue, SecretStoreError, type SecretStore } from './secret-store.js';
import { withFileLock } from '../state/file-lock.js';

export const SECRETS_FILE = 'secrets.enc.json';
const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** One value: AES-256-GCM ciphertext, with its account as additional authenticated data. */
interface Entry {
  iv: Buffer;
  tag: Buffer;
  data: Buffer;
}

interface Contents {
  keyId: string;
  entries: Map<string, Entry>;
}

export interface EncryptedFileSecretStoreOptions {
  stateDir: string;
  /** The text of WORKSPACE_SECRET_KEY; without it the key is `<stateDir>/secrets.key`, created on first use. */
  key?: string | undefined;
}

/**
 * Secrets in `<stateDir>/secrets.enc.json`, `{ version: 1, keyId, entries: { [account]: { iv, tag, data } } }`
 * (base64), for machines without a keychain. Each value has a fresh IV and its account name as
 * additional authenticated data, so an entry moved to another account fails to decrypt. `keyId`
 * names the key, so a changed key is reported as such and the file is left alone.
 */
export class EncryptedFileSecretStore implements SecretStore {
  readonly kind = 'encrypted-file';
  readonly path: string;
  private readonly stateDir: string;
  private key: Promise<SecretKey> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: EncryptedFileSecretStoreOptions) {
    this.stateDir = options.stateDir;
    this.path = join(options.stateDir, SECRETS_FILE);
    if (options.key !== undefined) this.key = Promise.resolve(secretKeyFromEnv(options.key));
  }

  async get(account: string): Promise<string | undefined> {
    checkAccount(account);
    const opened = await this.open();
    const entry = opened?.entries.get(account);
    if (!opened || !entry) return undefined;
    return this.decrypt(opened.key, account, entry);
  }

  async set(account: string, value: string): Promise<void> {
    checkAccount(account);
    checkValue(value);
    await this.exclusive(async () => {
      const opened = await this.open();
      const key = opened?.key ?? (await this.loadKey(false));
      const entries = opened?.entries ?? new Map<string, Entry>();
      entries.set(account, encrypt(key, account, value));
      await this.write(key, entries);
    });
  }

  async delete(account: string): Promise<boolean> {
    checkAccount(account);
    return this.exclusive(async () => {
      const opened = await this.open();
      if (!opened?.entries.delete(account)) return false;
      await this.write(opened.key, opened.entries);
      return true;
    });
  }

  async accounts(prefix: string): Promise<string[]> {
    checkPrefix(prefix);
    const opened = await this.open();
    return [...(opened?.entries.keys() ?? [])].filter((account) => account.startsWith(prefix)).sort();
  }

  /** The entries and their key, checked to be the one they were written with; undefined (and no key made) while there is no file. */
  private async open(): Promise<{ key: SecretKey; entries: Map<string, Entry> } | undefined> {
    const contents = await this.read();
    if (!contents) return undefined;
    const key = await this.loadKey(true);
    if (contents.keyId !== secretKeyId(key.bytes)) {
      throw new SecretStoreError(
        `Cannot decrypt the secret store ${this.path}: it was written with another key than ${key.source} (the key changed?). ` +
          `Restore the key it was written with; to start over without its secrets instead, move ${this.path} aside.`,
      );
    }
    return { key, entries: contents.entries };
  }

  private loadKey(fileExists: boolean): Promise<SecretKey> {
    this.key ??= (async () => {
      const existing = await readKeyFile(this.stateDir);
      if (existing) return existing;
      // A new key beside secrets written with a lost one would only hide the loss.
      if (fileExists) {
        throw new SecretStoreError(
          `The secret store ${this.path} exists but its key ${join(this.stateDir, SECRET_KEY_FILE)} is missing. ` +
            `Restore that file, or set ${SECRET_KEY_ENV} to the key.`,
        );
      }
      return createKeyFile(this.stateDir);
    })().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  private decrypt(key: SecretKey, account: string, entry: Entry): string {
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, entry.iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(account, 'utf8'));
      decipher.setAuthTag(entry.tag);
      return Buffer.concat([decipher.update(entry.data), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SecretStoreError(
        `The secret ${account} in ${this.path} failed its integrity check: the file was changed outside this app. Set the secret again to replace it.`,
        { cause: error },
      );
    }
  }

  /** The file's contents, undefined when there is none; a corrupt file is moved aside and stays refused. */
  private async read(): Promise<Contents | undefined> {
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await this.refuseIfMovedAside();
      return undefined;
    }
    let identity: string;
    let text: string;
    try {
      identity = identityOf(await handle.stat());
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const parsed = this.parse(text);
    if (typeof parsed !== 'string') return parsed;
    // Move aside only the file actually read; another process may have replaced it meanwhile.
    const now = await stat(this.path).catch(() => undefined);
    if (!now || identityOf(now) !== identity) return this.read();
    const aside = `${this.path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    try {
      await rename(this.path, aside);
    } catch (error) {
      // Another process moved it first: reading again finds its aside.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.read();
      throw error;
    }
    throw new SecretStoreError(
      `The secret store ${this.path} was unreadable (${parsed}) and was moved to ${aside}. ` +
        `Secrets are refused until you fix that file and move it back, or delete it to start with no secrets.`,
    );
  }

  /** An absent file after a corrupt one was moved aside is not "no secrets": it stays refused until someone decides. */
  private async refuseIfMovedAside(): Promise<void> {
    const prefix = `${SECRETS_FILE}.corrupt-`;
    const names = await readdir(this.stateDir).catch(() => [] as string[]);
    const aside = names
      .filter((name) => name.startsWith(prefix))
      .sort()
      .at(-1);
    if (aside === undefined) return;
    throw new SecretStoreError(
      `The secret store ${this.path} was moved to ${join(this.stateDir, aside)} because it was unreadable. ` +
        `Secrets are refused until you fix that file and move it back, or delete it to start with no secrets.`,
    );
  }

  /** The contents, or what is wrong with the file. */
  private parse(text: string): Contents | string {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return 'it is not valid JSON';
    }
    if (!isObject(json)) return 'it is not a JSON object';
    if (typeof json.version === 'number' && json.version > FORMAT_VERSION) {
      throw new SecretStoreError(
        `The secret store ${this.path} was written by a newer version of this app (format version ${json.version}). Update the app to use it.`,
      );
    }
    if (json.version !== FORMAT_VERSION) return `version is not ${FORMAT_VERSION}`;
    if (typeof json.keyId !== 'string' || !/^[0-9a-f]{16}$/.test(json.keyId)) return 'keyId is missing or malformed';
    if (!isObject(json.entries)) return 'entries is not an object';
    const entries = new Map<string, Entry>();
    // Object.entries, not a schema's record: an account may be called "__proto__".
    for (const [account, raw] of Object.entries(json.entries)) {
      const entry = parseEntry(raw);
      if (!entry || !isValidAccount(account)) return `the entry ${JSON.stringify(account.slice(0, 80))} is malformed`;
      entries.set(account, entry);
    }
    return { keyId: json.keyId, entries };
  }

  private async write(key: SecretKey, entries: Map<string, Entry>): Promise<void> {
    const json = {
      version: FORMAT_VERSION,
      keyId: secretKeyId(key.bytes),
      entries: Object.fromEntries(
        [...entries].map(([account, entry]) => [
          account,
          { iv: entry.iv.toString('base64'), tag: entry.tag.toString('base64'), data: entry.data.toString('base64') },
        ]),
      ),
    };
    await writeFileAtomic(this.path, JSON.stringify(json, null, 2) + '\n', { mode: 0o600 });
  }

  /** Read-modify-write runs one at a time: in this process by a queue, across processes by a lock file. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
      return withFileLock(`${this.path}.lock`, task);
    });
    this.queue = run.catch(() => {});
    return run;
  }
}

function encrypt(key: SecretKey, account: string, value: string): Entry {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(account, 'utf8'));
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), data };
}

function parseEntry(raw: unknown): Entry | undefined {
  if (!isObject(raw) || Object.keys(raw).length !== 3) return undefined;
  const iv = strictBase64(raw.iv);
  const tag = strictBase64(raw.tag);
  const data = strictBase64(raw.data);
  if (iv?.length !== IV_BYTES || tag?.length !== TAG_BYTES || !data?.length) return undefined;
  return { iv, tag, data };
}

/** Node's base64 decoder skips what it does not understand; only text that encodes back the same is taken. */
function strictBase64(value: unknown): Buffer | undefined {
  if (typeof value !== 'string') return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.toString('base64') === value ? bytes : undefined;
}

function isValidAccount(account: string): boolean {
  try {
    checkAccount(account);
    return true;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function identityOf(stats: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}
