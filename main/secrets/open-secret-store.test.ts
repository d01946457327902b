import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { KEYCHAIN_SERVICE, KeychainSecretStore } from './keychain-store.js';
import { openSecretStore, SECRET_STORE_CHOICE_FILE } from './open-secret-store.js';
import { SecretStoreError } from './secret-store.js';
import { KEYTAR_SKIP, moduleUrl, outcomeOf, runChild } from '../../test/support/secrets.js';

const linux = process.platform === 'linux';
/** Environment of a child process that finds no keychain: its D-Bus address leads nowhere. */
const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent', WORKSPACE_SECRET_STORE: '' };

// Each test clears its keychain service afterwards, and most choose between the keychain and the file.
describe('openSecretStore', { skip: KEYTAR_SKIP }, () => {
  let dir: string;
  let said: string[];
  const say = (line: string) => said.push(line);
  const service = `persona-open-store-test-${process.pid}-${randomBytes(3).toString('hex')}`;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'open-secret-store-'));
    said = [];
  });
  afterEach(async () => {
    const keychain = new KeychainSecretStore({ service });
    for (const account of await keychain.accounts('')) await keychain.delete(account);
    await rm(dir, { recursive: true, force: true });
  });

  const recorded = async () =>
    JSON.parse(await readFile(join(dir, SECRET_STORE_CHOICE_FILE), 'utf8')) as { version: number; store: string };

  it('on first use takes the OS keychain where it answers, says so once and records it for later commands', async () => {
    const store = await openSecretStore({ stateDir: dir, env: { WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    assert.equal(store.kind, 'keychain');
    await store.set('k', 'in-the-keychain');
    assert.equal(await new KeychainSecretStore({ service }).get('k'), 'in-the-keychain');
    assert.equal(said.length, 1);
    assert.match(
      said[0]!,
      /^Logins and secrets are kept in the OS keychain because it answers here\. This is recorded in .*secret-store\.json, so later commands use it too\.$/,
    );
    assert.equal((await recorded()).store, 'keychain');
    const again = await openSecretStore({ stateDir: dir, env: { WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    assert.equal(again.kind, 'keychain');
    assert.equal(said.length, 1, 'said once, not on every command');
  });

  it(
    'on first use without a keychain takes the encrypted file, says why, and every later command uses it with no setting',
    { skip: !linux && 'the Secret Service is Linux only' },
    async () => {
      const code = `import { openSecretStore } from ${moduleUrl('open-secret-store.ts')};
       const said = [];
       const first = await openSecretStore({ stateDir: ${JSON.stringify(dir)}, say: (line) => said.push(line) });
       await first.set('k', 'kept-in-the-file');
       const later = await openSecretStore({ stateDir: ${JSON.stringify(dir)}, say: (line) => said.push(line) });
       console.log(JSON.stringify({ said, kinds: [first.kind, later.kind], value: await later.get('k') }));`;
      const outcome = outcomeOf(await runChild(code, NO_KEYCHAIN)) as { said: string[]; kinds: string[]; value: string };
      assert.deepEqual(outcome.kinds, ['encrypted-file', 'encrypted-file']);
      assert.equal(outcome.value, 'kept-in-the-file');
      assert.equal(outcome.said.length, 1);
      assert.match(
        outcome.said[0]!,
        /^Logins and secrets are kept in the encrypted file .*secrets\.enc\.json because the OS keychain is unavailable here \(.+\)\. This is recorded in /,
      );
      assert.equal((await recorded()).store, 'file');
    },
  );

  it(
    'never swaps a recorded keychain for the file when the keychain stops answering',
    { skip: !linux && 'the Secret Service is Linux only' },
    async () => {
      await writeFile(
        join(dir, SECRET_STORE_CHOICE_FILE),
        JSON.stringify({ version: 1, store: 'keychain', chosenAt: new Date().toISOString() }),
      );
      const result = await runChild(
        `import { openSecretStore } from ${moduleUrl('open-secret-store.ts')};
       const store = await openSecretStore({ stateDir: ${JSON.stringify(dir)}, env: {} });
       try { await store.set('k', 'must-not-land-anywhere'); console.log(JSON.stringify('stored')); }
       catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }`,
        NO_KEYCHAIN,
      );
      const outcome = outcomeOf(result) as { name: string; message: string };
      assert.equal(outcome.name, 'SecretStoreUnavailableError');
      assert.match(outcome.message, /^The OS keychain is not available/);
      assert.deepEqual(await readdir(dir), [SECRET_STORE_CHOICE_FILE], 'nothing else was written to the state dir');
    },
  );

  it('keeps a state dir that already has an encrypted file on it', async () => {
    await new EncryptedFileSecretStore({ stateDir: dir }).set('old', 'from-before');
    const store = await openSecretStore({ stateDir: dir, env: { WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    assert.equal(store.kind, 'encrypted-file');
    assert.equal(await store.get('old'), 'from-before');
    assert.match(said[0]!, /encrypted file .* where this state dir already keeps them/);
  });

  it('opens the encrypted file with WORKSPACE_SECRET_STORE=file, with the key from WORKSPACE_SECRET_KEY', async () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const store = await openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_SECRET_KEY: key }, say });
    assert.equal(store.kind, 'encrypted-file');
    assert.match(said[0]!, /kept in the encrypted file .* as WORKSPACE_SECRET_STORE asks/);
    await store.set('k', 'v');
    assert.deepEqual(
      (await readdir(dir)).sort(),
      [SECRET_STORE_CHOICE_FILE, 'secrets.enc.json'],
      'the env key is used, no key file is made',
    );
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir, key }).get('k'), 'v');
  });

  it('takes a WORKSPACE_SECRET_KEY on its own as asking for the encrypted file', async () => {
    const store = await openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_KEY: Buffer.alloc(32, 3).toString('hex') }, say });
    assert.equal(store.kind, 'encrypted-file');
    assert.match(said[0]!, /implied by WORKSPACE_SECRET_KEY/);
  });

  it('refuses an unknown store, a key that would be ignored, a bad key and a damaged record, changing nothing', async () => {
    await assert.rejects(openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'plaintext' }, say }), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.equal(
        error.message,
        'WORKSPACE_SECRET_STORE=plaintext is not a secret store. Use keychain or file, or unset it to keep the store chosen on first use.',
      );
      return true;
    });
    await assert.rejects(
      openSecretStore({
        stateDir: dir,
        env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_SECRET_KEY: Buffer.alloc(32).toString('hex') },
        say,
      }),
      /WORKSPACE_SECRET_KEY is set but WORKSPACE_SECRET_STORE=keychain keeps secrets in the OS keychain\. Set WORKSPACE_SECRET_STORE=file .* or unset WORKSPACE_SECRET_KEY/,
    );
    assert.deepEqual(await readdir(dir), [], 'nothing recorded for a refused setting');
    await assert.rejects(
      openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_SECRET_KEY: 'short' }, say }),
      /not a 32-byte key/,
    );
    await writeFile(join(dir, SECRET_STORE_CHOICE_FILE), '{"store": "vault"}');
    await assert.rejects(
      openSecretStore({ stateDir: dir, env: {}, say }),
      /secret-store\.json records where secrets are kept, but it is damaged\. Write \{"version": 1, "store": "keychain"\}/,
    );
    assert.equal(
      await readFile(join(dir, SECRET_STORE_CHOICE_FILE), 'utf8'),
      '{"store": "vault"}',
      'a damaged record is left for the person to fix',
    );
  });

  it('moves every secret when asked for the other store, then uses it from then on', async () => {
    const file = await openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'file' }, say });
    await file.set('place:a', 'first-value');
    await file.set('login:b', 'second-value');
    const moved = await openSecretStore({
      stateDir: dir,
      env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: service },
      say,
    });
    assert.equal(moved.kind, 'keychain');
    assert.match(
      said.at(-1)!,
      /^Moved 2 logins and secrets from the encrypted file to the OS keychain, as WORKSPACE_SECRET_STORE=keychain asks; they are kept there from now on/,
    );
    assert.equal(await moved.get('place:a'), 'first-value');
    assert.equal(await moved.get('login:b'), 'second-value');
    assert.deepEqual(await new EncryptedFileSecretStore({ stateDir: dir }).accounts(''), [], 'the file keeps none');
    assert.equal((await recorded()).store, 'keychain');
    const later = await openSecretStore({ stateDir: dir, env: { WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    assert.equal(later.kind, 'keychain', 'the new choice holds with no setting');
    assert.equal(await later.get('login:b'), 'second-value');
  });

  it('keeps two installations apart with WORKSPACE_KEYCHAIN_SERVICE', async () => {
    const second = new KeychainSecretStore({ service: `${service}-second` });
    const store = await openSecretStore({
      stateDir: dir,
      env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: second.service },
      say,
    });
    const account = `two-installs-${randomBytes(3).toString('hex')}`;
    try {
      await store.set(account, 'second-install');
      assert.equal(await second.get(account), 'second-install');
      assert.equal(await new KeychainSecretStore({ service: KEYCHAIN_SERVICE }).get(account), undefined);
      assert.equal(
        await (await openSecretStore({ stateDir: dir, env: {}, say })).get(account),
        undefined,
        'with no setting, the default service',
      );
    } finally {
      await second.delete(account);
    }
  });

  it('a store opened before a move follows the secrets to the new store', async () => {
    const server = await openSecretStore({
      stateDir: dir,
      env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_KEYCHAIN_SERVICE: service },
      say,
    });
    await server.set('login:a', 'moved-value');
    await openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    assert.equal(await server.get('login:a'), 'moved-value');
    assert.equal(server.kind, 'keychain');
    assert.deepEqual(await server.accounts(''), ['login:a']);
    await server.set('login:b', 'written-after-the-move');
    assert.equal(await new KeychainSecretStore({ service }).get('login:b'), 'written-after-the-move');
    assert.deepEqual(
      await new EncryptedFileSecretStore({ stateDir: dir }).accounts(''),
      [],
      'nothing written to the store that was emptied',
    );
    assert.equal(await server.delete('login:a'), true);
    assert.equal(await new KeychainSecretStore({ service }).get('login:a'), undefined);
  });

  it('a store opened before a move reads the new store even when the old one fails', async () => {
    const server = await openSecretStore({
      stateDir: dir,
      env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_KEYCHAIN_SERVICE: service },
      say,
    });
    await server.set('login:a', 'moved-value');
    await openSecretStore({ stateDir: dir, env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: service }, say });
    await writeFile(join(dir, 'secrets.enc.json'), 'not a secrets file');
    assert.equal(await server.get('login:a'), 'moved-value');
  });

  it('loses no write made while another process moves the secrets', async () => {
    const server = await openSecretStore({
      stateDir: dir,
      env: { WORKSPACE_SECRET_STORE: 'file', WORKSPACE_KEYCHAIN_SERVICE: service },
      say,
    });
    for (let i = 0; i < 40; i += 1) await server.set(`old:${i}`, `old-value-${i}`);
    const move = runChild(
      `import { openSecretStore } from ${moduleUrl('open-secret-store.ts')};
       await openSecretStore({ stateDir: ${JSON.stringify(dir)}, env: { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: ${JSON.stringify(service)} }, say: () => {} });
       console.log(JSON.stringify('moved'));`,
      {},
    );
    // Write while the other process holds the move's lock, not before or after it.
    while (!(await readdir(dir)).includes(`${SECRET_STORE_CHOICE_FILE}.lock`)) await new Promise((resolve) => setTimeout(resolve, 2));
    await Promise.all(Array.from({ length: 10 }, (_, i) => server.set(`new:${i}`, `new-value-${i}`)));
    assert.equal(outcomeOf(await move), 'moved');
    const keychain = new KeychainSecretStore({ service });
    assert.equal((await keychain.accounts('old:')).length, 40);
    for (let i = 0; i < 10; i += 1)
      assert.equal(await keychain.get(`new:${i}`), `new-value-${i}`, `new:${i} is in the store every command now uses`);
    assert.deepEqual(await new EncryptedFileSecretStore({ stateDir: dir }).accounts(''), [], 'the file keeps none');
  });
});
