import { SecretStoreError, type SecretStore } from './secret-store.js';

/** One MCP connection: the store of a (person, place) and the server's name in it. */
export interface ConnectionIdentity {
  storeId: string;
  serverName: string;
}

const PART = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Items owned by one connection (OAuth tokens, client registration, ...), filed under
 * `connection:<storeId>:<serverName>:<key>`. The parts hold no `:`, so one connection's prefix never
 * matches another's items and removing a connection can take all of its items with it.
 */
export class ConnectionSecrets {
  constructor(private readonly store: SecretStore) {}

  async set(connection: ConnectionIdentity, key: string, value: string): Promise<void> {
    await this.store.set(accountOf(connection, key), value);
  }

  async get(connection: ConnectionIdentity, key: string): Promise<string | undefined> {
    return this.store.get(accountOf(connection, key));
  }

  /** Deletes every item of the connection; returns how many there were. */
  async deleteAll(connection: ConnectionIdentity): Promise<number> {
    let deleted = 0;
    for (const account of await this.store.accounts(connectionPrefix(connection))) {
      if (await this.store.delete(account)) deleted++;
    }
    return deleted;
  }
}

function connectionPrefix({ storeId, serverName }: ConnectionIdentity): string {
  checkPart('store id', storeId);
  checkPart('server name', serverName);
  return `connection:${storeId}:${serverName}:`;
}

function accountOf(connection: ConnectionIdentity, key: string): string {
  checkPart('item key', key);
  return connectionPrefix(connection) + key;
}

function checkPart(what: string, value: string): void {
  if (!PART.test(value)) throw new SecretStoreError(`A connection's ${what} must be 1 to 128 letters, digits, '_', '.' or '-'.`);
}
