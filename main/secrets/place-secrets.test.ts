import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { InvalidPlaceSecretError, PlaceSecretExistsError, PlaceSecrets, UnknownPlaceSecretError } from './place-secrets.js';
import { assertNotInFiles, KEYTAR_SKIP, moduleUrl, outcomeOf, runChild, secretBackends, testKeychain } from '../../test/support/secrets.js';

const { keychain, backends } = secretBackends('place-secrets-');
// Where the PlaceSecrets of these tests keep their lock (a state dir of their own).
const lockDir = mkdtempSync(join(tmpdir(), 'place-secrets-lock-'));
after(() => rm(lockDir, { recursive: true, force: true }));

for (const [label, storeOf, skip] of backends) {
  describe(`PlaceSecrets in ${label}`, { skip }, () => {
    const secrets = (): PlaceSecrets => new PlaceSecrets(storeOf(), lockDir);

    it('sets, lists (names only, sorted), reads and removes the secrets of a place', async () => {
      const place = secrets();
      await place.set('Crew/alpha', 'SENTRY_TOKEN', 'sentry-value-3390', { replace: false });
      await place.set('Crew/alpha', 'API.key-2', 'api-value-3390', { replace: false });
      await assert.rejects(place.set('Crew/alpha', 'API.key-2', 'api-value-kept-out-3390', { replace: false }), (error: Error) => {
        assert.ok(error instanceof PlaceSecretExistsError);
        assert.equal(error.message, 'The place Crew/alpha already has a secret named API.key-2; it was not changed.');
        return true;
      });
      assert.equal(await place.value('Crew/alpha', 'API.key-2'), 'api-value-3390');
      await place.set('Crew/alpha', 'API.key-2', 'api-value-replaced-3390', { replace: true });
      const names = await place.names('Crew/alpha');
      assert.deepEqual(names, ['API.key-2', 'SENTRY_TOKEN']);
      assert.ok(!JSON.stringify(names).includes('3390'));
      assert.equal(await place.value('Crew/alpha', 'API.key-2'), 'api-value-replaced-3390');
      await place.remove('Crew/alpha', 'API.key-2');
      assert.deepEqual(await place.names('Crew/alpha'), ['SENTRY_TOKEN']);
    });

    it('keeps every place to itself, whatever its path', async () => {
      const place = secrets();
      // Roots that are prefixes of each other, contain the separator or look encoded.
      const roots = ['', 'Crew', 'Crew/a', 'Crew/a:b', 'Crew/a%3Ab', 'Crew/a:', 'Crew/ab', '_users/o/Chats/Code/projects/x', 'Crew/ä'];
      for (const [i, root] of roots.entries()) await place.set(root, 'TOKEN', `token-of-place-${i}`, { replace: false });
      await place.set('Crew/a', 'ONLY_A', 'only-a', { replace: false });
      for (const [i, root] of roots.entries()) {
        assert.equal(await place.value(root, 'TOKEN'), `token-of-place-${i}`, `root ${JSON.stringify(root)}`);
        assert.deepEqual(await place.names(root), root === 'Crew/a' ? ['ONLY_A', 'TOKEN'] : ['TOKEN'], `root ${JSON.stringify(root)}`);
      }
      await place.remove('Crew/a', 'TOKEN');
      assert.equal(await place.value('Crew/a:b', 'TOKEN'), 'token-of-place-3');
      assert.equal(await place.value('Crew/ab', 'TOKEN'), 'token-of-place-6');
    });

    it('names an unknown secret and its place, never a value', async () => {
      const place = secrets();
      await assert.rejects(place.value('Crew/beta', 'MISSING'), (error: Error) => {
        assert.ok(error instanceof UnknownPlaceSecretError);
        assert.equal(
          error.message,
          "The place Crew/beta has no secret named MISSING. Add it in the place's secrets, or pick one of the secrets it has.",
        );
        assert.equal(error.root, 'Crew/beta');
        assert.equal(error.secretName, 'MISSING');
        return true;
      });
      await assert.rejects(place.remove('', 'MISSING'), /^UnknownPlaceSecretError: This machine has no secret named MISSING/);
    });
  });
}

describe('PlaceSecrets input checks', { skip: KEYTAR_SKIP }, () => {
  const place = new PlaceSecrets(keychain, lockDir);

  it('accepts names of 1 to 64 letters, digits, _ . - and refuses others without repeating them', async () => {
    await place.set('Crew/names', 'a', 'v', { replace: false });
    await place.set('Crew/names', 'A'.repeat(64), 'v', { replace: false });
    for (const name of ['', 'A'.repeat(65), 'has space', 'colon:name', 'slash/name', 'sk-live-7781 pasted']) {
      await assert.rejects(place.set('Crew/names', name, 'v', { replace: false }), (error: Error) => {
        assert.ok(error instanceof InvalidPlaceSecretError);
        assert.equal(error.message, "A secret name must be 1 to 64 letters, digits, '_', '.' or '-' (no spaces).");
        return true;
      });
    }
    await assert.rejects(place.value('Crew/names', 'bad name'), InvalidPlaceSecretError);
    await assert.rejects(place.remove('Crew/names', 'bad name'), InvalidPlaceSecretError);
  });

  it('accepts values of 1 byte to 16 KiB and refuses others without repeating them', async () => {
    await place.set('Crew/values', 'MAX', 'x'.repeat(16 * 1024), { replace: false });
    assert.equal((await place.value('Crew/values', 'MAX')).length, 16 * 1024);
    for (const value of ['', 'y'.repeat(16 * 1024 + 1), 'é'.repeat(8 * 1024 + 1), 'lone\uD800-6612']) {
      await assert.rejects(place.set('Crew/values', 'BAD', value, { replace: false }), (error: Error) => {
        assert.ok(error instanceof InvalidPlaceSecretError);
        assert.equal(error.message, 'The secret was not saved: a secret value must be 1 byte to 16 KiB of text.');
        return true;
      });
    }
    assert.deepEqual(await place.names('Crew/values'), ['MAX']);
  });

  it('refuses values with CR, LF or NUL, saying why and never repeating them', async () => {
    const cases: Array<[string, RegExp]> = [
      ['sk-crlf-6612\r\nX-Injected: 1', /line break \(CR or LF\)/],
      ['sk-lf-6612\n', /line break \(CR or LF\)/],
      ['sk-cr-6612\r', /line break \(CR or LF\)/],
      ['sk-nul-6612\0', /a NUL character/],
    ];
    for (const [value, reason] of cases) {
      await assert.rejects(place.set('Crew/crlf', 'BAD', value, { replace: false }), (error: Error) => {
        assert.ok(error instanceof InvalidPlaceSecretError);
        assert.match(error.message, /^The secret was not saved: /);
        assert.match(error.message, reason);
        assert.ok(!error.message.includes('6612'), 'the value is not repeated');
        return true;
      });
    }
    assert.deepEqual(await place.names('Crew/crlf'), []);
  });

  it('refuses to hand out a value with a line break saved before such values were refused', async () => {
    await keychain.set(`place-secret:${encodeURIComponent('Crew/old')}:OLD`, 'sk-old-6612\r\nX: y');
    await assert.rejects(place.value('Crew/old', 'OLD'), (error: Error) => {
      assert.ok(error instanceof InvalidPlaceSecretError);
      assert.equal(
        error.message,
        'The secret OLD of the place Crew/old cannot be used: it contains a line break (CR or LF), which an HTTP header cannot carry; paste the value without the line break. Set it again.',
      );
      return true;
    });
  });

  it('refuses place paths with control characters or too long to name an item', async () => {
    await assert.rejects(place.names('Crew/\nx'), InvalidPlaceSecretError);
    await assert.rejects(place.set('Crew/' + 'x'.repeat(480), 'NAME', 'v', { replace: false }), /too long to keep secrets for/);
  });
});

describe('PlaceSecrets in the encrypted file', () => {
  it('writes no value in plaintext to any file', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'place-secrets-plain-'));
    try {
      const place = new PlaceSecrets(new EncryptedFileSecretStore({ stateDir }), stateDir);
      const values = ['ghp_plaintextCheck0001', 'sk-live-plaintextCheck0002', 'Bearer plaintextCheck0003'];
      for (const [i, value] of values.entries()) await place.set('Crew/plain', `S${i}`, value, { replace: false });
      await place.remove('Crew/plain', 'S0');
      const searched = await assertNotInFiles(stateDir, values);
      assert.ok(searched.some((file) => file.endsWith('secrets.enc.json')));
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

describe('PlaceSecrets between processes', { skip: KEYTAR_SKIP }, () => {
  const raceKeychain = testKeychain();
  after(() => raceKeychain.clear());

  it('lets exactly one of the processes creating the same new secret have it, and refuses the others', async () => {
    // Three processes (the server, the CLI, another CLI) create the same 12 names in the same
    // keychain at the same moment, none asking to replace: each name ends with one value, that of
    // the one process told it was saved; the others are told the place has it.
    const startAt = Date.now() + 2000;
    const script = (tag: string): string =>
      `import { KeychainSecretStore } from ${moduleUrl('keychain-store.ts')};
       import { PlaceSecrets, PlaceSecretExistsError } from ${moduleUrl('place-secrets.ts')};
       const place = new PlaceSecrets(new KeychainSecretStore({ service: ${JSON.stringify(raceKeychain.service)} }), ${JSON.stringify(lockDir)});
       await new Promise((resolve) => setTimeout(resolve, ${startAt} - Date.now()));
       const won = [];
       for (let i = 0; i < 12; i++) {
         try {
           await place.set('Crew/race', 'NAME_' + i, '${tag}-value-' + i, { replace: false });
           won.push(i);
         } catch (error) {
           if (!(error instanceof PlaceSecretExistsError)) throw error;
         }
       }
       console.log(JSON.stringify(won));`;
    const tags = ['p1', 'p2', 'p3'];
    const results = await Promise.all(tags.map((tag) => runChild(script(tag))));
    const won = results.map((result) => outcomeOf(result) as number[]);
    const place = new PlaceSecrets(raceKeychain, lockDir);
    for (let i = 0; i < 12; i++) {
      const winners = tags.filter((_, t) => won[t]!.includes(i));
      assert.equal(winners.length, 1, `NAME_${i} was saved by ${winners.join(', ') || 'nobody'}`);
      assert.equal(await place.value('Crew/race', `NAME_${i}`), `${winners[0]}-value-${i}`);
    }
  });
});
