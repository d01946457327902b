import { withFileLock } from '../state/file-lock.js';
import type { SecretStore } from './secret-store.js';
import { readChoice, type SecretStoreChoice } from './store-choice-record.js';

/**
 * The store that the state dir's record names, looked up on every operation. Another process may
 * move every secret to the other store (WORKSPACE_SECRET_STORE changed) while this one runs: a
 * server holding the old store would then read an emptied store and write where no other command
 * looks. Writes take the record's lock, which a move holds from its first copy to its last delete,
 * so none lands in the store being emptied; a read is checked against the record afterwards (one
 * look per read) and done again in the recorded store if that changed.
 */
export class RecordedSecretStore implements SecretStore {
  constructor(
    private choice: SecretStoreChoice,
    private readonly storeOf: (choice: SecretStoreChoice) => SecretStore,
    private readonly recordPath: string,
  ) {
    // Made now, so a bad setting (a key of the wrong size) is refused when the store is opened.
    storeOf(choice);
  }

  /** The kind of the store the last operation used (or the one opened). */
  get kind(): SecretStore['kind'] {
    return this.storeOf(this.choice).kind;
  }

  get(account: string): Promise<string | undefined> {
    return this.read((store) => store.get(account));
  }

  accounts(prefix: string): Promise<string[]> {
    return this.read((store) => store.accounts(prefix));
  }

  set(account: string, value: string): Promise<void> {
    return this.write((store) => store.set(account, value));
  }

  delete(account: string): Promise<boolean> {
    return this.write((store) => store.delete(account));
  }

  private async read<T>(operation: (store: SecretStore) => Promise<T>): Promise<T> {
    for (;;) {
      const used = this.choice;
      // A move records the new store before it empties the old one: if the record still names the
      // store just read, the read saw every secret; else it is done again in the store recorded now.
      try {
        const result = await operation(this.storeOf(used));
        if ((await this.recorded()) === used) return result;
      } catch (error) {
        // The store the secrets moved away from may fail (a keychain locked since): not this one's to report.
        if ((await this.recorded()) === used) throw error;
      }
    }
  }

  private write<T>(operation: (store: SecretStore) => Promise<T>): Promise<T> {
    return withFileLock(`${this.recordPath}.lock`, async () => operation(this.storeOf(await this.recorded())));
  }

  /** The recorded store; the last one known if the record was deleted meanwhile. */
  private async recorded(): Promise<SecretStoreChoice> {
    this.choice = (await readChoice(this.recordPath)) ?? this.choice;
    return this.choice;
  }
}
