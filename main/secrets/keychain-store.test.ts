import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { KEYCHAIN_CHECK_ACCOUNT, KeychainSecretStore } from './keychain-store.js';
import { SecretStoreError, SecretStoreUnavailableError } from './secret-store.js';
import { KEYTAR_SKIP, moduleUrl, outcomeOf, runChild, runCommand, testKeychain } from '../../test/support/secrets.js';

const linux = process.platform === 'linux';
const canRunPrivateKeyring =
  linux && ['dbus-run-session', 'gnome-keyring-daemon', 'gdbus'].every((tool) => spawnSync('which', [tool]).status === 0);

describe('KeychainSecretStore (real OS keychain)', { skip: KEYTAR_SKIP }, () => {
  const store = testKeychain();
  after(() => store.clear());

  it('sets, gets, replaces and deletes a value', async () => {
    assert.equal(store.kind, 'keychain');
    assert.equal(await store.get('t:one'), undefined);
    await store.set('t:one', 'first value é😀');
    assert.equal(await store.get('t:one'), 'first value é😀');
    await store.set('t:one', 'second value');
    assert.equal(await store.get('t:one'), 'second value');
    assert.equal(await store.delete('t:one'), true);
    assert.equal(await store.get('t:one'), undefined);
    assert.equal(await store.delete('t:one'), false);
  });

  it('lists accounts by prefix, sorted, without their values', async () => {
    await store.set('list:b', 'value-of-b-4471');
    await store.set('list:a', 'value-of-a-4471');
    await store.set('listing:c', 'value-of-c-4471');
    const listed = await store.accounts('list:');
    assert.deepEqual(listed, ['list:a', 'list:b']);
    assert.ok(!JSON.stringify(listed).includes('4471'));
    assert.deepEqual(await store.accounts('list'), ['list:a', 'list:b', 'listing:c']);
    assert.deepEqual(await store.accounts('nothing:'), []);
  });

  it("keeps its unlock check item out of listings and out of callers' reach", async () => {
    await store.set('seen:x', 'v');
    assert.ok(!(await store.accounts('')).includes(KEYCHAIN_CHECK_ACCOUNT));
    await assert.rejects(store.get(KEYCHAIN_CHECK_ACCOUNT), /reserved/);
    await assert.rejects(store.set(KEYCHAIN_CHECK_ACCOUNT, 'v'), /reserved/);
  });

  it('keeps each service apart', async () => {
    const other = testKeychain();
    try {
      await store.set('shared:name', 'mine');
      assert.equal(await other.get('shared:name'), undefined);
      assert.deepEqual(await other.accounts('shared:'), []);
    } finally {
      await other.clear();
    }
  });

  it('refuses malformed accounts and values without repeating the value', async () => {
    for (const account of ['', 'a'.repeat(501), 'line\nbreak', 'tab\there', 'del\u007f', 'lone\uD800']) {
      await assert.rejects(store.set(account, 'v'), SecretStoreError);
    }
    assert.deepEqual(await store.accounts('a'.repeat(500)), []);
    await assert.rejects(store.accounts('bad\n'), SecretStoreError);
    for (const value of ['', 'nul\0inside-9931', 'lone\uDC00-9931']) {
      await assert.rejects(store.set('t:bad', value), (error: Error) => {
        assert.ok(error instanceof SecretStoreError);
        assert.ok(!error.message.includes('9931'));
        return true;
      });
    }
  });

  it('deletes every item of its service, its check item too, and only those', async () => {
    const own = testKeychain();
    try {
      await store.set('other:kept', 'v');
      await own.set('all:a', 'v1');
      await own.set('all:b', 'v2');
      await own.accounts(''); // writes the check item, as every listing does
      assert.deepEqual((await own.deleteAll()).toSorted(), ['all:a', 'all:b', KEYCHAIN_CHECK_ACCOUNT].toSorted());
      assert.deepEqual(await own.deleteAll(), [], 'nothing: the check item it wrote to see the keychain unlocked is not counted');
      assert.equal(await store.get('other:kept'), 'v', "another service's items stay");
    } finally {
      await own.clear();
    }
  });
});

describe('KeychainSecretStore without a usable keychain', () => {
  it('loads keytar only when a secret is needed, and a module that cannot load gives the clear error', async () => {
    let loads = 0;
    const broken = new KeychainSecretStore({
      service: 'never-used',
      loadKeytar: async () => {
        loads++;
        throw new Error('libsecret-1.so.0: cannot open shared object file');
      },
    });
    assert.equal(loads, 0);
    await assert.rejects(broken.get('x'), (error: Error) => {
      assert.ok(error instanceof SecretStoreUnavailableError);
      assert.match(error.message, /keytar\) could not be loaded \(libsecret-1\.so\.0: cannot open shared object file\)/);
      assert.match(error.message, /WORKSPACE_SECRET_STORE=file/);
      return true;
    });
    await assert.rejects(broken.accounts(''), SecretStoreUnavailableError);
    assert.equal(loads, 2, 'a failed load is tried again next time');
  });

  it('starts where keytar cannot load, and says so when a secret is first needed', async () => {
    // A resolve hook makes `import('keytar')` fail as a missing native module would.
    const result = await runChild(
      `import { register } from 'node:module';
       register('data:text/javascript,' + encodeURIComponent(
         'export async function resolve(specifier, context, next) { if (specifier === "keytar") throw new Error("keytar.node: invalid ELF header"); return next(specifier, context); }'));
       const { KeychainSecretStore } = await import(${moduleUrl('keychain-store.ts')});
       const store = new KeychainSecretStore({ service: 'never-used' });
       try { await store.get('a'); console.log(JSON.stringify('succeeded')); }
       catch (error) { console.log(JSON.stringify({ name: error.name, message: error.message })); }`,
    );
    const outcome = outcomeOf(result) as { name: string; message: string };
    assert.equal(outcome.name, 'SecretStoreUnavailableError');
    assert.match(outcome.message, /The OS keychain module \(keytar\) could not be loaded \(.*invalid ELF header\)\. Reinstall the app/);
  });

  it(
    'fails every operation with SecretStoreUnavailableError when there is no D-Bus',
    { skip: (!linux && 'the Secret Service is Linux only') || KEYTAR_SKIP },
    async () => {
      const result = await runChild(
        `import { KeychainSecretStore } from ${moduleUrl('keychain-store.ts')};
       const store = new KeychainSecretStore({ service: 'persona-mcp-workspace-test-nobus' });
       const outcomes = {};
       for (const [name, run] of Object.entries({
         get: () => store.get('a'), set: () => store.set('a', 'secret-value-5521'), delete: () => store.delete('a'), accounts: () => store.accounts(''),
       })) {
         try { await run(); outcomes[name] = 'succeeded'; } catch (error) { outcomes[name] = { name: error.name, message: error.message }; }
       }
       console.log(JSON.stringify(outcomes));`,
        { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' },
      );
      const outcomes = outcomeOf(result) as Record<string, { name: string; message: string }>;
      for (const op of ['get', 'set', 'delete', 'accounts']) {
        assert.equal(outcomes[op]?.name, 'SecretStoreUnavailableError', `${op}: ${JSON.stringify(outcomes[op])}`);
        assert.match(
          outcomes[op]!.message,
          /^The OS keychain is not available \(.+\)\. Start and unlock the OS keychain .*gnome-keyring.*WORKSPACE_SECRET_STORE=file/,
        );
        assert.ok(!outcomes[op]!.message.includes('secret-value-5521'));
      }
    },
  );

  it(
    'reports a locked keyring as unavailable instead of "no secret" (and does not crash listing it)',
    { skip: (!canRunPrivateKeyring && 'needs dbus-run-session, gnome-keyring-daemon and gdbus') || KEYTAR_SKIP },
    async () => {
      // A keyring of its own: locking the one the other tests share would fail them.
      const code = `import { execFileSync } from 'node:child_process';
       import { KeychainSecretStore } from ${moduleUrl('keychain-store.ts')};
       const store = new KeychainSecretStore({ service: 'persona-mcp-workspace-test-locked' });
       await store.set('kept', 'kept-value');
       execFileSync('gdbus', ['call', '--session', '--dest', 'org.freedesktop.secrets', '--object-path', '/org/freedesktop/secrets',
         '--method', 'org.freedesktop.Secret.Service.Lock', "['/org/freedesktop/secrets/collection/login']"]);
       const outcomes = {};
       for (const [name, run] of Object.entries({
         get: () => store.get('kept'), delete: () => store.delete('kept'), set: () => store.set('new', 'v'), accounts: () => store.accounts(''),
       })) {
         try { outcomes[name] = { value: await run() }; } catch (error) { outcomes[name] = { name: error.name, message: error.message }; }
       }
       console.log(JSON.stringify(outcomes));`;
      const script =
        'set -e; export XDG_DATA_HOME="$(mktemp -d)"; trap \'rm -rf "$XDG_DATA_HOME"\' EXIT; ' +
        'eval "$(printf test | gnome-keyring-daemon --unlock --components=secrets)" >/dev/null; ' +
        `"${process.execPath}" --input-type=module -e "$CHILD_CODE"`;
      const result = await runCommand('dbus-run-session', ['--', 'bash', '-c', script], { CHILD_CODE: code });
      assert.equal(result.code, 0, result.stderr);
      const outcomes = outcomeOf(result) as Record<string, { name?: string; message?: string }>;
      for (const op of ['get', 'delete', 'set', 'accounts']) {
        assert.equal(outcomes[op]?.name, 'SecretStoreUnavailableError', `${op}: ${JSON.stringify(outcomes[op])}`);
        assert.match(outcomes[op]!.message!, /locked/);
      }
    },
  );
});
