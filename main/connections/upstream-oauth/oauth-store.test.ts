import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ConnectionSecrets } from '../../secrets/connection-secrets.js';
import type { SecretStore } from '../../secrets/secret-store.js';
import { KEYTAR_SKIP, testKeychain } from '../../../test/support/secrets.js';
import { OAuthStore, type OAuthRecord } from './oauth-store.js';

const keychain = testKeychain();

const secrets = new ConnectionSecrets(keychain);
const tokens = { access_token: 'at-1', token_type: 'Bearer', refresh_token: 'rt-1', issuer: 'https://as.example/' };

describe('OAuthStore', { skip: KEYTAR_SKIP }, () => {
  after(() => keychain.clear());
  it('keeps a connection’s record in its keychain item, where another store (process) reads it', async () => {
    const connection = { storeId: 'store-a', serverName: 'u1__linear' };
    await new OAuthStore(secrets).update(connection, (record) => [{ ...record, tokens }, undefined]);
    assert.deepEqual((await new OAuthStore(secrets).read(connection)).tokens, tokens);
    assert.deepEqual(JSON.parse((await secrets.get(connection, 'oauth'))!).tokens, tokens);
  });

  it('writes a change before its result is returned, and a failed write changes nothing', async () => {
    const connection = { storeId: 'store-b', serverName: 'u1__linear' };
    const locked: SecretStore = {
      kind: 'keychain',
      get: (account) => keychain.get(account),
      set: () => Promise.reject(new Error('keychain locked')),
      delete: (account) => keychain.delete(account),
      accounts: (prefix) => keychain.accounts(prefix),
    };
    const store = new OAuthStore(new ConnectionSecrets(locked));
    await assert.rejects(
      store.update(connection, (record) => [{ ...record, tokens }, 'done']),
      /keychain locked/,
    );
    assert.deepEqual(await store.read(connection), {}, 'the cache did not take the unwritten change');
  });

  it('runs the changes of one connection one at a time, each on the record the previous one left', async () => {
    const connection = { storeId: 'store-c', serverName: 'u1__linear' };
    const store = new OAuthStore(secrets);
    const slow = store.update(connection, async (record) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return [{ ...record, tokens }, undefined];
    });
    const verifier = store.update(connection, (record) => [{ ...record, signIn: { state: 's', verifier: 'v' } }, undefined]);
    await Promise.all([slow, verifier]);
    const record: OAuthRecord = await new OAuthStore(secrets).read(connection);
    assert.deepEqual(record.tokens, tokens);
    assert.deepEqual(record.signIn, { state: 's', verifier: 'v' });
  });

  it('reads the keychain afresh for a change, so another process’s write is not overwritten', async () => {
    const connection = { storeId: 'store-d', serverName: 'u1__linear' };
    const mine = new OAuthStore(secrets);
    await mine.read(connection);
    await new OAuthStore(secrets).update(connection, (record) => [{ ...record, tokens }, undefined]);
    await mine.update(connection, (record) => [{ ...record, signIn: { state: 's', verifier: 'v' } }, undefined]);
    assert.deepEqual((await new OAuthStore(secrets).read(connection)).tokens, tokens);
  });

  it('takes an unreadable record for no login (the next sign-in replaces it)', async () => {
    const connection = { storeId: 'store-e', serverName: 'u1__linear' };
    await secrets.set(connection, 'oauth', '{"tokens": {"access_token": 5}}');
    assert.deepEqual(await new OAuthStore(secrets).read(connection), {});
    await secrets.set(connection, 'oauth', 'not json');
    assert.deepEqual(await new OAuthStore(secrets).read(connection), {});
  });

  it('forgets every keychain item of the connection and nothing of another, after a change in progress', async () => {
    const connection = { storeId: 'store-f', serverName: 'u1__linear' };
    const other = { storeId: 'store-f', serverName: 'u1__notion' };
    const store = new OAuthStore(secrets);
    await store.update(other, (record) => [{ ...record, tokens }, undefined]);
    await secrets.set(connection, 'other-item', 'x');
    const change = store.update(connection, async (record) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return [{ ...record, tokens }, undefined];
    });
    const seen = await store.forget(connection, async (record) => record.tokens);
    await change;
    assert.deepEqual(seen, tokens, 'the last look came after the change');
    assert.deepEqual(await keychain.accounts('connection:store-f:u1__linear:'), []);
    assert.deepEqual(await store.read(connection), {});
    assert.deepEqual((await store.read(other)).tokens, tokens);
  });
});
