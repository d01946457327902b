import { checkAccount, checkPrefix, checkValue, SecretStoreError, SecretStoreUnavailableError, type SecretStore } from './secret-store.js';

/** The part of keytar used here, declared locally so the app builds where keytar is not installed. */
export interface Keytar {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
  findCredentials(service: string): Promise<Array<{ account: string; password: string }>>;
}

// A variable, not a literal: the type checker must not require the optional module to be installed.
const KEYTAR = 'keytar';

export const KEYCHAIN_SERVICE = 'persona-mcp-workspace';

/**
 * libsecret answers "nothing there" for a locked keyring (and keytar's listing crashes the process
 * on one), so an empty answer is confirmed by reading this marker item: only an unlocked keyring
 * returns it.
 */
export const KEYCHAIN_CHECK_ACCOUNT = 'app:keychain-check';
const KEYCHAIN_CHECK_VALUE = 'This item only shows that the keychain is unlocked.';

const WHAT_TO_DO =
  'Start and unlock the OS keychain (on Linux a keyring that provides the Secret Service on D-Bus, such as gnome-keyring or KeePassXC), ' +
  'or set WORKSPACE_SECRET_STORE=file with WORKSPACE_SECRET_KEY or a key file to keep secrets in an encrypted file.';

export interface KeychainSecretStoreOptions {
  /** The keychain service every item is filed under; tests use their own. */
  service?: string;
  /** Loads keytar; defaults to a dynamic import, so a machine where it cannot load still starts. */
  loadKeytar?: () => Promise<Keytar>;
}

/** Secrets in the OS keychain (keytar), every item under one service name. */
export class KeychainSecretStore implements SecretStore {
  readonly kind = 'keychain';
  readonly service: string;
  private readonly loadKeytar: () => Promise<Keytar>;
  private keytar: Promise<Keytar> | undefined;

  constructor(options: KeychainSecretStoreOptions = {}) {
    this.service = options.service ?? KEYCHAIN_SERVICE;
    this.loadKeytar = options.loadKeytar ?? importKeytar;
  }

  async get(account: string): Promise<string | undefined> {
    checkCallerAccount(account);
    const value = await this.call((keytar) => keytar.getPassword(this.service, account));
    if (value !== null) return value;
    await this.confirmUnlocked();
    return undefined;
  }

  async set(account: string, value: string): Promise<void> {
    checkCallerAccount(account);
    checkValue(value);
    await this.call((keytar) => keytar.setPassword(this.service, account, value));
  }

  async delete(account: string): Promise<boolean> {
    checkCallerAccount(account);
    const deleted = await this.call((keytar) => keytar.deletePassword(this.service, account));
    if (!deleted) await this.confirmUnlocked();
    return deleted;
  }

  async accounts(prefix: string): Promise<string[]> {
    checkPrefix(prefix);
    await this.confirmUnlocked();
    // keytar can only list with the passwords: keep the names and let the values go at once.
    const accounts = await this.call(async (keytar) => (await keytar.findCredentials(this.service)).map((found) => found.account));
    return accounts.filter((account) => account !== KEYCHAIN_CHECK_ACCOUNT && account.startsWith(prefix)).sort();
  }

  /**
   * Deletes every item filed under this service, the unlock check item too (uninstall); returns the
   * accounts it deleted, the check item among them if it was there before.
   */
  async deleteAll(): Promise<string[]> {
    const hadCheck = (await this.call((keytar) => keytar.getPassword(this.service, KEYCHAIN_CHECK_ACCOUNT))) !== null;
    await this.confirmUnlocked();
    const accounts = await this.call(async (keytar) => (await keytar.findCredentials(this.service)).map((found) => found.account));
    for (const account of accounts) await this.call((keytar) => keytar.deletePassword(this.service, account));
    return hadCheck ? accounts : accounts.filter((account) => account !== KEYCHAIN_CHECK_ACCOUNT);
  }

  private async confirmUnlocked(): Promise<void> {
    const check = await this.call((keytar) => keytar.getPassword(this.service, KEYCHAIN_CHECK_ACCOUNT));
    if (check === KEYCHAIN_CHECK_VALUE) return;
    // Absent (first use) or locked: a locked keyring refuses the write.
    await this.call((keytar) => keytar.setPassword(this.service, KEYCHAIN_CHECK_ACCOUNT, KEYCHAIN_CHECK_VALUE));
  }

  private async call<T>(operation: (keytar: Keytar) => Promise<T>): Promise<T> {
    const keytar = await this.module();
    try {
      return await operation(keytar);
    } catch (error) {
      // keytar only fails when the keychain itself does (no D-Bus, no Secret Service, locked): its
      // messages come from the OS and name no secret.
      throw new SecretStoreUnavailableError(`The OS keychain is not available (${messageOf(error)}). ${WHAT_TO_DO}`, { cause: error });
    }
  }

  private module(): Promise<Keytar> {
    this.keytar ??= this.loadKeytar().catch((error: unknown) => {
      this.keytar = undefined;
      throw new SecretStoreUnavailableError(
        `The OS keychain module (keytar) could not be loaded (${messageOf(error)}). Reinstall the app for this system, or set ` +
          'WORKSPACE_SECRET_STORE=file with WORKSPACE_SECRET_KEY or a key file to keep secrets in an encrypted file.',
        { cause: error },
      );
    });
    return this.keytar;
  }
}

function checkCallerAccount(account: string): void {
  checkAccount(account);
  if (account === KEYCHAIN_CHECK_ACCOUNT)
    throw new SecretStoreError(`The secret account ${KEYCHAIN_CHECK_ACCOUNT} is reserved by the keychain store.`);
}

async function importKeytar(): Promise<Keytar> {
  // keytar is CommonJS: its functions are on the default export.
  const module = (await import(KEYTAR)) as { default: Keytar };
  return module.default;
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'no reason given';
}
