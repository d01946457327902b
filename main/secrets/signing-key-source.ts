import { randomBytes } from 'node:crypto';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FileSigningKeySource, SIGNING_KEY_BYTES, SigningKeyError, type SigningKeySource } from '../auth/signing-key.js';
import type { SecretStore } from './secret-store.js';
import { withFileLock } from '../state/file-lock.js';

export const SIGNING_KEY_ACCOUNT = 'app:agent-signing-key';

/**
 * The app's agent-token signing key in the secret store (base64). At first load, a key left in
 * `<stateDir>/agent-signing-key` by earlier versions is moved in, so tokens made with it keep
 * working; the file is deleted only once the store holds the same key. First loads run under a lock
 * file, so processes starting together end with one key. No fallback to the file: if the store is
 * unavailable, its error says what to do.
 */
export class SecretStoreSigningKeySource implements SigningKeySource {
  private readonly legacy: FileSigningKeySource;

  constructor(
    private readonly store: SecretStore,
    private readonly stateDir: string,
  ) {
    this.legacy = new FileSigningKeySource(stateDir);
  }

  async load(): Promise<Uint8Array> {
    const stored = await this.stored();
    if (stored) return this.withoutLeftover(stored);
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    return withFileLock(join(this.stateDir, 'agent-signing-key.lock'), async () => {
      // Another process may have finished while this one waited for the lock.
      const current = await this.stored();
      if (current) return this.withoutLeftover(current);
      const moving = await this.legacy.loadExisting();
      const key = moving ?? new Uint8Array(randomBytes(SIGNING_KEY_BYTES));
      await this.store.set(SIGNING_KEY_ACCOUNT, Buffer.from(key).toString('base64'));
      const readBack = await this.stored();
      if (!readBack || !Buffer.from(readBack).equals(key)) {
        throw new SigningKeyError(
          `The agent signing key was written to ${this.where()} but reading it back gave ${readBack ? 'another key' : 'nothing'}` +
            `${moving ? `; ${this.legacy.path} was kept` : ''}. Check that the keychain keeps items for this user, then start the app again.`,
        );
      }
      if (moving) await removeIfPresent(this.legacy.path);
      return key;
    });
  }

  private async stored(): Promise<Uint8Array | undefined> {
    const text = await this.store.get(SIGNING_KEY_ACCOUNT);
    if (text === undefined) return undefined;
    const key = Buffer.from(text, 'base64');
    if (key.length !== SIGNING_KEY_BYTES || key.toString('base64') !== text) {
      throw new SigningKeyError(
        `The agent signing key in ${this.where()} (item ${SIGNING_KEY_ACCOUNT}) is not a ${SIGNING_KEY_BYTES}-byte key. ` +
          'Delete that item to have a new one created; agent tokens created before will stop working.',
      );
    }
    return new Uint8Array(key);
  }

  /** A migration cut short (after the store write, before the delete) leaves the file behind: finish it. */
  private async withoutLeftover(key: Uint8Array): Promise<Uint8Array> {
    let left: Buffer;
    try {
      left = await readFile(this.legacy.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return key;
      throw error;
    }
    if (!left.equals(key)) {
      throw new SigningKeyError(
        `${this.legacy.path} holds another agent signing key than ${this.where()}. Delete ${this.legacy.path} to keep the key in ` +
          `${this.where()}; agent tokens made with the file's key will stop working.`,
      );
    }
    await removeIfPresent(this.legacy.path);
    return key;
  }

  private where(): string {
    return this.store.kind === 'keychain' ? 'the OS keychain' : 'the encrypted secret store';
  }
}

async function removeIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
