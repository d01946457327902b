import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withFileLock } from '../state/file-lock.js';
import { EncryptedFileSecretStore, SECRETS_FILE } from './encrypted-file-store.js';
import { KeychainSecretStore } from './keychain-store.js';
import { RecordedSecretStore } from './recorded-secret-store.js';
import { SecretStoreError, type SecretStore } from './secret-store.js';
import { readChoice, SECRET_STORE_CHOICE_FILE, type SecretStoreChoice, writeChoice } from './store-choice-record.js';

export { SECRET_STORE_CHOICE_FILE } from './store-choice-record.js';

/** How long the first use waits for the keychain to answer before choosing the file. */
const KEYCHAIN_PROBE_MS = 5_000;

export interface OpenSecretStoreOptions {
  stateDir: string;
  env?: NodeJS.ProcessEnv;
  /** Where the choice (made once) and a move between stores are told; default stderr. */
  say?: (line: string) => void;
  probeTimeoutMs?: number;
}

/**
 * The secret store, chosen once per state dir. The first use takes WORKSPACE_SECRET_STORE if set,
 * else the OS keychain if it answers, else the encrypted file, says so and records it; every later
 * command uses the recorded store with no setting. A recorded keychain that stops answering is never
 * swapped for the file (that would quietly move logins to a weaker place): its operations fail
 * instead. Asking for the other store later moves the secrets there, and a store opened before
 * follows them (RecordedSecretStore).
 */
export async function openSecretStore({
  stateDir,
  env = process.env,
  say = (line) => process.stderr.write(`${line}\n`),
  probeTimeoutMs = KEYCHAIN_PROBE_MS,
}: OpenSecretStoreOptions): Promise<SecretStore> {
  const requested = requestedStore(env);
  const stores = new Map<SecretStoreChoice, SecretStore>();
  const storeOf = (choice: SecretStoreChoice): SecretStore => {
    let store = stores.get(choice);
    if (!store) {
      store =
        choice === 'keychain'
          ? new KeychainSecretStore(env.WORKSPACE_KEYCHAIN_SERVICE ? { service: env.WORKSPACE_KEYCHAIN_SERVICE } : {})
          : new EncryptedFileSecretStore({ stateDir, key: env.WORKSPACE_SECRET_KEY || undefined });
      stores.set(choice, store);
    }
    return store;
  };
  const recordPath = join(stateDir, SECRET_STORE_CHOICE_FILE);
  const following = (choice: SecretStoreChoice) => new RecordedSecretStore(choice, storeOf, recordPath);

  // The common case, without a lock: already chosen, and nothing asks for another store.
  const recorded = await readChoice(recordPath);
  if (recorded && (!requested || requested === recorded)) return following(recorded);

  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const choice = await withFileLock(`${recordPath}.lock`, async () => {
    const current = await readChoice(recordPath);
    if (current && (!requested || requested === current)) return current;
    if (current) return moveSecrets(current, requested!, { storeOf, recordPath, say });
    const { choice, why } = requested
      ? {
          choice: requested,
          why: `as WORKSPACE_SECRET_STORE${env.WORKSPACE_SECRET_STORE ? '' : ' (implied by WORKSPACE_SECRET_KEY)'} asks`,
        }
      : await firstChoice(stateDir, storeOf, probeTimeoutMs);
    await writeChoice(recordPath, choice);
    say(
      `Logins and secrets are kept in ${describe(choice, stateDir)} ${why}. This is recorded in ${recordPath}, so later commands use it too.`,
    );
    return choice;
  });
  return following(choice);
}

function requestedStore(env: NodeJS.ProcessEnv): SecretStoreChoice | undefined {
  const kind = env.WORKSPACE_SECRET_STORE || undefined;
  if (kind !== undefined && kind !== 'keychain' && kind !== 'file') {
    throw new SecretStoreError(
      `WORKSPACE_SECRET_STORE=${kind} is not a secret store. Use keychain or file, or unset it to keep the store chosen on first use.`,
    );
  }
  if (kind === 'keychain' && env.WORKSPACE_SECRET_KEY) {
    throw new SecretStoreError(
      'WORKSPACE_SECRET_KEY is set but WORKSPACE_SECRET_STORE=keychain keeps secrets in the OS keychain. Set WORKSPACE_SECRET_STORE=file to use the encrypted file, or unset WORKSPACE_SECRET_KEY.',
    );
  }
  // A key is only for the encrypted file: giving one asks for it.
  return kind ?? (env.WORKSPACE_SECRET_KEY ? 'file' : undefined);
}

async function firstChoice(
  stateDir: string,
  storeOf: (choice: SecretStoreChoice) => SecretStore,
  probeTimeoutMs: number,
): Promise<{ choice: SecretStoreChoice; why: string }> {
  // Secrets written before the choice was recorded stay where they are.
  if (await exists(join(stateDir, SECRETS_FILE))) return { choice: 'file', why: 'where this state dir already keeps them' };
  const problem = await keychainProblem(storeOf('keychain'), probeTimeoutMs);
  if (problem === undefined) return { choice: 'keychain', why: 'because it answers here' };
  return { choice: 'file', why: `because the OS keychain is unavailable here (${problem})` };
}

/** Why the keychain cannot be used now, or undefined when it answers. */
async function keychainProblem(keychain: SecretStore, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([keychain.accounts('').then(() => undefined), timeout]);
  } catch (error) {
    // The store's message starts with what failed; the part in brackets is the reason.
    const message = (error as Error).message;
    return /\(([^)]*)\)/.exec(message)?.[1] ?? message;
  } finally {
    clearTimeout(timer);
  }
}

interface MoveContext {
  storeOf: (choice: SecretStoreChoice) => SecretStore;
  recordPath: string;
  say: (line: string) => void;
}

/** WORKSPACE_SECRET_STORE asks for the other store: every secret moves there, then the choice changes. */
async function moveSecrets(
  from: SecretStoreChoice,
  to: SecretStoreChoice,
  { storeOf, recordPath, say }: MoveContext,
): Promise<SecretStoreChoice> {
  const source = storeOf(from);
  const target = storeOf(to);
  const stay = `Unset WORKSPACE_SECRET_STORE to go on using ${describe(from)}.`;
  let accounts: string[];
  try {
    accounts = await source.accounts('');
  } catch (error) {
    throw new SecretStoreError(
      `WORKSPACE_SECRET_STORE=${to} asks to move the logins and secrets out of ${describe(from)} (recorded in ${recordPath}), but it cannot be read: ${(error as Error).message} ${stay} ` +
        `To give them up and start over, delete ${recordPath}.`,
      { cause: error },
    );
  }
  // Copy everything before recording the change, so a failure leaves the old store complete and in use.
  for (const account of accounts) {
    const value = await source.get(account);
    if (value !== undefined) await target.set(account, value);
  }
  await writeChoice(recordPath, to);
  for (const account of accounts) await source.delete(account);
  say(
    `Moved ${accounts.length} logins and secrets from ${describe(from)} to ${describe(to)}, as WORKSPACE_SECRET_STORE=${to} asks; they are kept there from now on (recorded in ${recordPath}).`,
  );
  return to;
}

/** The store chosen on first use, if one was, and where that is recorded (for `config`). */
export async function recordedSecretStore(stateDir: string): Promise<{ store: SecretStoreChoice; path: string } | undefined> {
  const path = join(stateDir, SECRET_STORE_CHOICE_FILE);
  const store = await readChoice(path);
  return store && { store, path };
}

function describe(choice: SecretStoreChoice, stateDir?: string): string {
  if (choice === 'keychain') return 'the OS keychain';
  return stateDir ? `the encrypted file ${join(stateDir, SECRETS_FILE)}` : 'the encrypted file';
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
