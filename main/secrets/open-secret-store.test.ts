import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { KEYCHAIN_SERVICE, KeychainSecretStore } from './keychain-store.js';
import { openSecretStore, SECRET_STORE_ENVIRONMENT } from './open-secret-store.js';
import { SecretStoreError } from './secret-store.js';
import { moduleUrl, outcomeOf, runChild } from '../../test/support/secrets.js';

describe('openSecretStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'open-secret-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('opens the OS keychain by default, under the app\'s service name', () => {
    for (const env of [{}, { WORKSPACE_SECRET_STORE: '' }, { WORKSPACE_SECRET_STORE: 'keychain' }]) {
      const store = openSecretStore({ stateDir: dir, env });
      assert.ok(store instanceof KeychainSecretStore);
      assert.equal(store.kind, 'keychain');
      assert.equal(store.service, KEYCHAIN_SERVICE);
    }
    assert.equal(KEYCHAIN_SERVICE, 'persona-mcp-workspace');
  });

  it('opens the encrypted file with WORKSPACE_SECRET_STORE=file, with the key from WORKSPACE_SECRET_KEY', async () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const store = openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_SECRET_KEY: key } });
    assert.ok(store instanceof EncryptedFileSecretStore);
    assert.equal(store.kind, 'encrypted-file');
    await store.set('k', 'v');
    assert.deepEqual(await readdir(dir), ['secrets.enc.json'], 'the env key is used, no key file is made');
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir, key }).get('k'), 'v');
  });

  it('refuses an unknown store, and a key that would be ignored', () => {
    assert.throws(() => openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'plaintext' } }), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.equal(error.message, 'WORKSPACE_SECRET_STORE=plaintext is not a secret store. Use keychain (the default) or file.');
      return true;
    });
    assert.throws(
      () => openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_KEY: Buffer.alloc(32).toString('hex') } }),
      /WORKSPACE_SECRET_KEY is set but secrets are kept in the OS keychain\. Set WORKSPACE_SECRET_STORE=file .* or unset WORKSPACE_SECRET_KEY/,
    );
    assert.throws(() => openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_SECRET_KEY: 'short' } }), /not a 32-byte key/);
  });

  it('keeps two installations apart with WORKSPACE_KEYCHAIN_SERVICE', () => {
    const store = openSecretStore({ stateDir: dir, env: { WORKSPACE_KEYCHAIN_SERVICE: 'persona-second-install' } });
    assert.ok(store instanceof KeychainSecretStore);
    assert.equal(store.service, 'persona-second-install');
    assert.equal((openSecretStore({ stateDir: dir, env: {} }) as KeychainSecretStore).service, KEYCHAIN_SERVICE);
  });

  it('describes its environment variables in one line each', () => {
    assert.deepEqual(Object.keys(SECRET_STORE_ENVIRONMENT), ['WORKSPACE_SECRET_STORE', 'WORKSPACE_SECRET_KEY', 'WORKSPACE_KEYCHAIN_SERVICE']);
    for (const text of Object.values(SECRET_STORE_ENVIRONMENT)) assert.match(text, /^[^\n]{20,200}$/);
  });

  it('never falls back to a file when the keychain is unavailable', { skip: process.platform !== 'linux' && 'the Secret Service is Linux only' }, async () => {
    const result = await runChild(
      `import { openSecretStore } from ${moduleUrl('open-secret-store.ts')};
       const store = openSecretStore({ stateDir: ${JSON.stringify(dir)}, env: {} });
       try { await store.set('k', 'must-not-land-anywhere'); console.log(JSON.stringify('stored')); }
       catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }`,
      { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', WORKSPACE_SECRET_STORE: '' },
    );
    const outcome = outcomeOf(result) as { name: string; message: string };
    assert.equal(outcome.name, 'SecretStoreUnavailableError');
    assert.match(outcome.message, /^The OS keychain is not available/);
    assert.deepEqual(await readdir(dir), [], 'nothing was written to the state dir');
  });
});
