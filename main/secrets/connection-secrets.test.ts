import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConnectionSecrets, type ConnectionIdentity } from './connection-secrets.js';
import { SecretStoreError } from './secret-store.js';
import { KEYTAR_SKIP, secretBackends } from '../../test/support/secrets.js';

const { keychain, backends } = secretBackends('connection-secrets-');

for (const [label, storeOf, skip] of backends) {
  describe(`ConnectionSecrets in ${label}`, { skip }, () => {
    it('keeps items per connection under connection:<storeId>:<serverName>:<key>', async () => {
      const store = storeOf();
      const secrets = new ConnectionSecrets(store);
      const linear: ConnectionIdentity = { storeId: 'a1b2c3', serverName: 'u9f8e__linear' };
      await secrets.set(linear, 'oauth-tokens', '{"access_token":"at-5150"}');
      assert.equal(await secrets.get(linear, 'oauth-tokens'), '{"access_token":"at-5150"}');
      assert.equal(await secrets.get(linear, 'client'), undefined);
      assert.deepEqual(await store.accounts('connection:a1b2c3:'), ['connection:a1b2c3:u9f8e__linear:oauth-tokens']);
    });

    it('deleteAll removes every item of one connection and nothing of another', async () => {
      const store = storeOf();
      const secrets = new ConnectionSecrets(store);
      const notion: ConnectionIdentity = { storeId: 's1', serverName: 'u1__notion' };
      // Names that start like the one removed: same store, longer server name; another store.
      const notionTwo: ConnectionIdentity = { storeId: 's1', serverName: 'u1__notion2' };
      const elsewhere: ConnectionIdentity = { storeId: 's10', serverName: 'u1__notion' };
      await secrets.set(notion, 'oauth-tokens', 'tokens');
      await secrets.set(notion, 'client', 'client');
      await secrets.set(notionTwo, 'oauth-tokens', 'other-tokens');
      await secrets.set(elsewhere, 'oauth-tokens', 'elsewhere-tokens');

      assert.equal(await secrets.deleteAll(notion), 2);
      assert.equal(await secrets.get(notion, 'oauth-tokens'), undefined);
      assert.equal(await secrets.get(notion, 'client'), undefined);
      assert.equal(await secrets.get(notionTwo, 'oauth-tokens'), 'other-tokens');
      assert.equal(await secrets.get(elsewhere, 'oauth-tokens'), 'elsewhere-tokens');
      assert.equal(await secrets.deleteAll(notion), 0);
    });
  });
}

describe('ConnectionSecrets input checks', { skip: KEYTAR_SKIP }, () => {
  it('refuses store ids, server names and keys that could blur the prefix', async () => {
    const secrets = new ConnectionSecrets(keychain);
    const ok: ConnectionIdentity = { storeId: 's', serverName: 'n' };
    const attempts = [
      () => secrets.get({ storeId: 'a:b', serverName: 'n' }, 'k'),
      () => secrets.get({ storeId: '', serverName: 'n' }, 'k'),
      () => secrets.set({ storeId: 's', serverName: 'x:y' }, 'k', 'v'),
      () => secrets.deleteAll({ storeId: 's', serverName: 'a'.repeat(129) }),
      () => secrets.get(ok, 'has:colon'),
      () => secrets.set(ok, '', 'v'),
    ];
    for (const attempt of attempts)
      await assert.rejects(
        attempt(),
        (error: Error) =>
          error instanceof SecretStoreError && /^A connection's (store id|server name|item key) must be 1 to 128/.test(error.message),
      );
  });
});
