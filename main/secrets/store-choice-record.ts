import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../state/atomic-write.js';
import { SecretStoreError } from './secret-store.js';

export type SecretStoreChoice = 'keychain' | 'file';

/** Where the choice is recorded, in the state dir. */
export const SECRET_STORE_CHOICE_FILE = 'secret-store.json';

interface Recorded {
  version: 1;
  store: SecretStoreChoice;
  chosenAt: string;
}

/** The recorded choice, undefined when none was made yet; a damaged record is refused, never guessed. */
export async function readChoice(path: string): Promise<SecretStoreChoice | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretStoreError(
      `Cannot read ${path}, which records where secrets are kept (${(error as NodeJS.ErrnoException).code ?? error}). Check its permissions.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const store = (parsed as Partial<Recorded> | undefined)?.store;
  if ((parsed as Partial<Recorded> | undefined)?.version !== 1 || (store !== 'keychain' && store !== 'file')) {
    // Guessing could point the app at an empty store and lose track of the secrets: ask instead.
    throw new SecretStoreError(
      `${path} records where secrets are kept, but it is damaged. Write {"version": 1, "store": "keychain"} or {"version": 1, "store": "file"} into it, whichever holds your secrets.`,
    );
  }
  return store;
}

export async function writeChoice(path: string, store: SecretStoreChoice): Promise<void> {
  const record: Recorded = { version: 1, store, chosenAt: new Date().toISOString() };
  await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}
