import { join } from 'node:path';
import { withFileLock } from '../state/file-lock.js';
import { isWellFormed, MAX_ACCOUNT_LENGTH, type SecretStore } from './secret-store.js';

export const MAX_SECRET_NAME_LENGTH = 64;
export const MAX_SECRET_VALUE_BYTES = 16 * 1024;
const ACCOUNT_PREFIX = 'place-secret:';
/** The lock every process takes to save a place secret (in the state dir). */
export const PLACE_SECRETS_LOCK = 'place-secrets.lock';

/** A secret name, value or place that cannot be used; the message never contains a value. */
export class InvalidPlaceSecretError extends Error {
  override readonly name = 'InvalidPlaceSecretError';
}

/** The place has a secret of that name already, and replacing it was not asked for. */
export class PlaceSecretExistsError extends Error {
  override readonly name = 'PlaceSecretExistsError';

  constructor(
    readonly root: string,
    readonly secretName: string,
  ) {
    super(`${describePlace(root)} already has a secret named ${secretName}; it was not changed.`);
  }
}

/** The place has no secret of that name. */
export class UnknownPlaceSecretError extends Error {
  override readonly name = 'UnknownPlaceSecretError';

  constructor(
    readonly root: string,
    readonly secretName: string,
  ) {
    super(`${describePlace(root)} has no secret named ${secretName}. Add it in the place's secrets, or pick one of the secrets it has.`);
  }
}

/**
 * The named secrets of a place (API-key header values of its MCP connections), one store item each:
 * `place-secret:<encodeURIComponent(root)>:<name>`. The encoded root holds no `:` and names hold
 * none either, so the prefix of one place never matches an item of another, whatever its root.
 */
export class PlaceSecrets {
  private readonly lockPath: string;

  /**
   * `stateDir`: where the lock lives that every process (the server, the CLI) takes to save a
   * secret, so that "only if the place has none of that name" holds between processes (a keychain
   * cannot create an item only if it is absent).
   */
  constructor(
    private readonly store: SecretStore,
    stateDir: string,
  ) {
    this.lockPath = join(stateDir, PLACE_SECRETS_LOCK);
  }

  /** Saves the value; one the place has already is replaced only with `replace` (PlaceSecretExistsError). */
  async set(root: string, name: string, value: string, { replace }: { replace: boolean }): Promise<void> {
    const account = accountOf(root, name);
    checkValue(value);
    await withFileLock(this.lockPath, async () => {
      // By name, as listings are: the value stays in the store.
      if (!replace && (await this.names(root)).includes(name)) throw new PlaceSecretExistsError(root, name);
      await this.store.set(account, value);
    });
  }

  /** The names, sorted; never the values. */
  async names(root: string): Promise<string[]> {
    const prefix = prefixOf(root);
    return (await this.store.accounts(prefix)).map((account) => account.slice(prefix.length)).sort();
  }

  async remove(root: string, name: string): Promise<void> {
    if (!(await this.store.delete(accountOf(root, name)))) throw new UnknownPlaceSecretError(root, name);
  }

  /** For the one outgoing request that needs it, and nothing else. */
  async value(root: string, name: string): Promise<string> {
    const value = await this.store.get(accountOf(root, name));
    if (value === undefined) throw new UnknownPlaceSecretError(root, name);
    // One saved before such values were refused would break the request, whose error quotes it.
    const problem = valueProblem(value);
    if (problem)
      throw new InvalidPlaceSecretError(
        `The secret ${name} of ${describePlace(root).replace(/^The/, 'the')} cannot be used: ${problem}. Set it again.`,
      );
    return value;
  }
}

function prefixOf(root: string): string {
  if (/\p{Cc}/u.test(root) || !isWellFormed(root)) {
    throw new InvalidPlaceSecretError('A place path must not contain control characters or broken Unicode.');
  }
  return `${ACCOUNT_PREFIX}${encodeURIComponent(root)}:`;
}

function accountOf(root: string, name: string): string {
  // The name is not repeated: a value pasted into the name field must not end up in a message.
  if (!new RegExp(`^[A-Za-z0-9_.-]{1,${MAX_SECRET_NAME_LENGTH}}$`).test(name)) {
    throw new InvalidPlaceSecretError(`A secret name must be 1 to ${MAX_SECRET_NAME_LENGTH} letters, digits, '_', '.' or '-' (no spaces).`);
  }
  const account = prefixOf(root) + name;
  if (account.length > MAX_ACCOUNT_LENGTH) {
    throw new InvalidPlaceSecretError(`The place path ${root} is too long to keep secrets for; use a place with a shorter path.`);
  }
  return account;
}

function checkValue(value: string): void {
  const problem = valueProblem(value);
  if (problem) throw new InvalidPlaceSecretError(`The secret was not saved: ${problem}.`);
}

/** What makes `value` unusable as a secret, in words that never quote it. */
function valueProblem(value: string): string | undefined {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes === 0 || bytes > MAX_SECRET_VALUE_BYTES || !isWellFormed(value))
    return `a secret value must be 1 byte to ${MAX_SECRET_VALUE_BYTES / 1024} KiB of text`;
  // It goes into an HTTP header, where a line break would end the header (and start another).
  if (/[\r\n]/.test(value))
    return 'it contains a line break (CR or LF), which an HTTP header cannot carry; paste the value without the line break';
  if (value.includes('\0')) return 'it contains a NUL character, which an HTTP header cannot carry';
  return undefined;
}

function describePlace(root: string): string {
  return root === '' ? 'This machine' : `The place ${root}`;
}
