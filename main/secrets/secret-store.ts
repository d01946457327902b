/**
 * Where logins and secrets live: the OS keychain, or an encrypted file where there is none.
 * Values leave a store only through `get`; listings return account names, never values.
 */
export interface SecretStore {
  /** The value, or undefined when the account holds none. */
  get(account: string): Promise<string | undefined>;
  /** Creates or replaces the value. */
  set(account: string, value: string): Promise<void>;
  /** True when there was a value to delete. */
  delete(account: string): Promise<boolean>;
  /** The accounts that start with `prefix`, sorted; `''` lists all. */
  accounts(prefix: string): Promise<string[]>;
  readonly kind: 'keychain' | 'encrypted-file';
}

/** The store refused or failed; the message says what to do. It never contains a secret value. */
export class SecretStoreError extends Error {
  override readonly name: string = 'SecretStoreError';
}

/** The store cannot be reached at all (no keychain, locked, module missing); the message says how to get one. */
export class SecretStoreUnavailableError extends SecretStoreError {
  override readonly name = 'SecretStoreUnavailableError';
}

export const MAX_ACCOUNT_LENGTH = 500;

/** Accounts are names chosen by code, shown in keychain managers: short and printable. */
export function checkAccount(account: string): void {
  if (account.length < 1 || account.length > MAX_ACCOUNT_LENGTH || /\p{Cc}/u.test(account) || !isWellFormed(account)) {
    throw new SecretStoreError(`A secret account name must be 1 to ${MAX_ACCOUNT_LENGTH} characters with no control characters.`);
  }
}

/** A listing prefix follows the account rules, except that it may be empty. */
export function checkPrefix(prefix: string): void {
  if (prefix !== '') checkAccount(prefix);
}

/**
 * Keychains keep text: an empty value is refused by some, a NUL cuts it short, and a lone
 * surrogate would come back changed. The message never repeats the value.
 */
export function checkValue(value: string): void {
  if (value.length === 0 || value.includes('\0') || !isWellFormed(value)) {
    throw new SecretStoreError('A secret value must be non-empty text without NUL characters or broken Unicode.');
  }
}

/** No lone UTF-16 surrogates, so the text survives a round trip through UTF-8. */
export function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}
