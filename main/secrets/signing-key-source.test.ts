import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileSigningKeySource, keyIdOf, SigningKeyError } from '../auth/signing-key.js';
import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { KeychainSecretStore } from './keychain-store.js';
import { SecretStoreUnavailableError, type SecretStore } from './secret-store.js';
import { SecretStoreSigningKeySource, SIGNING_KEY_ACCOUNT } from './signing-key-source.js';
import { assertNotInFiles, KEYTAR_SKIP, moduleUrl, outcomeOf, runChild, testKeychain } from '../../test/support/secrets.js';

const posix = process.platform !== 'win32';

describe('SecretStoreSigningKeySource (real OS keychain)', { skip: KEYTAR_SKIP }, () => {
  let dir: string;
  let keychain: ReturnType<typeof testKeychain>;
  let legacyPath: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signing-key-source-'));
    legacyPath = join(dir, 'agent-signing-key');
    keychain = testKeychain();
  });
  afterEach(async () => {
    await keychain.clear();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a 32-byte key in the keychain on first use and writes no file', async () => {
    const key = await new SecretStoreSigningKeySource(keychain, dir).load();
    assert.equal(key.length, 32);
    assert.equal(await keychain.get(SIGNING_KEY_ACCOUNT), Buffer.from(key).toString('base64'));
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(await new SecretStoreSigningKeySource(keychain, dir).load(), key);
  });

  it('moves the key file of earlier versions into the keychain: same key, file gone, once', async () => {
    const fileKey = await new FileSigningKeySource(dir).load();
    const moved = await new SecretStoreSigningKeySource(keychain, dir).load();
    assert.deepEqual(moved, fileKey, 'tokens signed before keep verifying');
    assert.equal(keyIdOf(moved), keyIdOf(fileKey));
    assert.equal(await keychain.get(SIGNING_KEY_ACCOUNT), Buffer.from(fileKey).toString('base64'));
    assert.deepEqual(await readdir(dir), [], 'the key file is deleted');
    assert.deepEqual(await new SecretStoreSigningKeySource(keychain, dir).load(), fileKey, 'loading again changes nothing');
    assert.deepEqual(await readdir(dir), []);
  });

  it('finishes a migration cut short after the keychain write', async () => {
    const fileKey = await new FileSigningKeySource(dir).load();
    await keychain.set(SIGNING_KEY_ACCOUNT, Buffer.from(fileKey).toString('base64'));
    assert.deepEqual(await new SecretStoreSigningKeySource(keychain, dir).load(), fileKey);
    assert.deepEqual(await readdir(dir), []);
  });

  it('refuses to choose when the keychain and a key file hold different keys', async () => {
    await new SecretStoreSigningKeySource(keychain, dir).load();
    await writeFile(legacyPath, Buffer.alloc(32, 9), { mode: 0o600 });
    await assert.rejects(new SecretStoreSigningKeySource(keychain, dir).load(), (error: Error) => {
      assert.ok(error instanceof SigningKeyError);
      assert.equal(
        error.message,
        `${legacyPath} holds another agent signing key than the OS keychain. Delete ${legacyPath} to keep the key in the OS keychain; agent tokens made with the file's key will stop working.`,
      );
      return true;
    });
    assert.deepEqual(await readFile(legacyPath), Buffer.alloc(32, 9));
  });

  it('does not move a key file others can read, and keeps it', { skip: !posix && 'POSIX modes only' }, async () => {
    await new FileSigningKeySource(dir).load();
    await chmod(legacyPath, 0o644);
    await assert.rejects(new SecretStoreSigningKeySource(keychain, dir).load(), /readable by other users \(mode 0644\)/);
    assert.equal(await keychain.get(SIGNING_KEY_ACCOUNT), undefined);
    assert.deepEqual(await readdir(dir), ['agent-signing-key']);
  });

  it('refuses a damaged key in the keychain', async () => {
    await keychain.set(SIGNING_KEY_ACCOUNT, 'c2hvcnQ=');
    await assert.rejects(new SecretStoreSigningKeySource(keychain, dir).load(), (error: Error) => {
      assert.ok(error instanceof SigningKeyError);
      assert.match(
        error.message,
        /^The agent signing key in the OS keychain \(item app:agent-signing-key\) is not a 32-byte key\. Delete that item/,
      );
      return true;
    });
  });

  it('gives every loader the same key when several start at once in one process', async () => {
    await new FileSigningKeySource(dir).load();
    const keys = await Promise.all(Array.from({ length: 6 }, () => new SecretStoreSigningKeySource(keychain, dir).load()));
    for (const key of keys) assert.deepEqual(key, keys[0]);
    assert.deepEqual(await readdir(dir), []);
  });

  for (const withFile of [false, true]) {
    it(`ends with one key when processes load it at once ${withFile ? 'while moving a key file' : 'on a fresh install'}`, async () => {
      const fileKey = withFile ? Buffer.from(await new FileSigningKeySource(dir).load()).toString('base64') : undefined;
      const startAt = Date.now() + 2000;
      const script = `import { KeychainSecretStore } from ${moduleUrl('keychain-store.ts')};
         import { SecretStoreSigningKeySource } from ${moduleUrl('signing-key-source.ts')};
         const store = new KeychainSecretStore({ service: ${JSON.stringify(keychain.service)} });
         const source = new SecretStoreSigningKeySource(store, ${JSON.stringify(dir)});
         await store.get('warm-up'); // keytar loaded and D-Bus connected before the start
         await new Promise((resolve) => setTimeout(resolve, ${startAt} - Date.now()));
         console.log(JSON.stringify(Buffer.from(await source.load()).toString('base64')));`;
      const results = await Promise.all(Array.from({ length: 5 }, () => runChild(script)));
      const keys = results.map((result) => outcomeOf(result));
      for (const key of keys) assert.equal(key, keys[0]);
      assert.equal(await keychain.get(SIGNING_KEY_ACCOUNT), keys[0]);
      if (fileKey) assert.equal(keys[0], fileKey);
      assert.deepEqual(await readdir(dir), []);
    });
  }
});

describe('SecretStoreSigningKeySource when the store fails', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signing-key-source-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("fails with the store's error and keeps the key file, never falling back to it", async () => {
    await new FileSigningKeySource(dir).load();
    const unavailable = new KeychainSecretStore({
      loadKeytar: () => Promise.reject(new Error('no keytar here')),
    });
    await assert.rejects(new SecretStoreSigningKeySource(unavailable, dir).load(), SecretStoreUnavailableError);
    assert.deepEqual(await readdir(dir), ['agent-signing-key']);
  });

  it('keeps the key file when the store does not give back what was written', async () => {
    const fileKey = await new FileSigningKeySource(dir).load();
    const forgetful: SecretStore = {
      kind: 'keychain',
      get: async () => undefined,
      set: async () => {},
      delete: async () => false,
      accounts: async () => [],
    };
    await assert.rejects(
      new SecretStoreSigningKeySource(forgetful, dir).load(),
      new RegExp(
        `^SigningKeyError: The agent signing key was written to the OS keychain but reading it back gave nothing; ${dir}/agent-signing-key was kept\\.`,
      ),
    );
    assert.deepEqual(await readFile(join(dir, 'agent-signing-key')), Buffer.from(fileKey));
  });

  it('works the same in the encrypted file, and no file holds the key in plaintext afterwards', async () => {
    const fileKey = await new FileSigningKeySource(dir).load();
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    assert.deepEqual(await new SecretStoreSigningKeySource(store, dir).load(), fileKey);
    assert.deepEqual(await new SecretStoreSigningKeySource(new EncryptedFileSecretStore({ stateDir: dir }), dir).load(), fileKey);
    assert.deepEqual((await readdir(dir)).sort(), ['secrets.enc.json', 'secrets.key']);
    await assertNotInFiles(dir, [fileKey, Buffer.from(fileKey).toString('base64'), Buffer.from(fileKey).toString('hex')]);
  });
});
