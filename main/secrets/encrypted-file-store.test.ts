import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { SecretStoreError } from './secret-store.js';
import { assertNotInFiles, moduleUrl, outcomeOf, runChild } from '../../test/support/secrets.js';

const posix = process.platform !== 'win32';

interface FileShape {
  version: number;
  keyId: string;
  entries: Record<string, { iv: string; tag: string; data: string }>;
}

describe('EncryptedFileSecretStore', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'secrets-file-'));
    path = join(dir, 'secrets.enc.json');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const readShape = async (): Promise<FileShape> => JSON.parse(await readFile(path, 'utf8')) as FileShape;
  const writeShape = (shape: FileShape): Promise<void> => writeFile(path, JSON.stringify(shape), { mode: 0o600 });

  it('sets, gets, replaces, deletes and lists, with values encrypted on disk', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    assert.equal(store.kind, 'encrypted-file');
    assert.equal(await store.get('a:one'), undefined);
    assert.deepEqual(await store.accounts(''), []);
    assert.equal(await store.delete('a:one'), false);
    assert.deepEqual(await readdir(dir), [], 'reading an empty store makes no key and no file');
    await store.set('a:one', 'plain-one-8812 é😀');
    await store.set('a:two', 'plain-two-8812');
    await store.set('b:three', 'plain-three-8812');
    await store.set('a:two', 'plain-two-replaced-8812');
    assert.equal(await store.get('a:one'), 'plain-one-8812 é😀');
    assert.equal(await store.get('a:two'), 'plain-two-replaced-8812');
    const listed = await store.accounts('a:');
    assert.deepEqual(listed, ['a:one', 'a:two']);
    assert.ok(!JSON.stringify(listed).includes('8812'));
    assert.equal(await store.delete('a:one'), true);
    assert.equal(await store.delete('a:one'), false);
    assert.deepEqual(await store.accounts(''), ['a:two', 'b:three']);

    // Another store object (another process) reads the same file with the key file.
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir }).get('b:three'), 'plain-three-8812');

    const shape = await readShape();
    assert.equal(shape.version, 1);
    assert.match(shape.keyId, /^[0-9a-f]{16}$/);
    assert.deepEqual(Object.keys(shape.entries).sort(), ['a:two', 'b:three']);
    for (const entry of Object.values(shape.entries)) {
      assert.equal(Buffer.from(entry.iv, 'base64').length, 12);
      assert.equal(Buffer.from(entry.tag, 'base64').length, 16);
    }
    if (posix) {
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      assert.equal((await stat(join(dir, 'secrets.key'))).mode & 0o777, 0o600);
    }
    assert.deepEqual((await readdir(dir)).sort(), ['secrets.enc.json', 'secrets.key'], 'no temp or lock files left');
    const searched = await assertNotInFiles(dir, ['plain-one-8812', 'plain-two-8812', 'plain-two-replaced-8812', 'plain-three-8812']);
    assert.equal(searched.length, 2);
  });

  it('uses a fresh IV for every write, so equal values do not look equal', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('x', 'same value');
    await store.set('y', 'same value');
    const first = (await readShape()).entries;
    await store.set('x', 'same value');
    const second = (await readShape()).entries;
    assert.notEqual(first.x!.iv, first.y!.iv);
    assert.notEqual(first.x!.data, first.y!.data);
    assert.notEqual(first.x!.iv, second.x!.iv);
  });

  it('takes the key from WORKSPACE_SECRET_KEY in base64 or hex, and creates no key file then', async () => {
    const key = randomBytes(32);
    await new EncryptedFileSecretStore({ stateDir: dir, key: key.toString('base64') }).set('k', 'value');
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir, key: key.toString('hex') }).get('k'), 'value');
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir, key: key.toString('base64url') }).get('k'), 'value');
    assert.equal(await new EncryptedFileSecretStore({ stateDir: dir, key: ` ${key.toString('base64')}\n` }).get('k'), 'value');
    assert.deepEqual(await readdir(dir), ['secrets.enc.json']);
  });

  it('refuses a WORKSPACE_SECRET_KEY that is not 32 bytes, without repeating it', () => {
    for (const text of ['', 'c2hvcnQta2V5LTc3MzE=', 'ab'.repeat(31), 'zz'.repeat(32), randomBytes(33).toString('base64')]) {
      assert.throws(
        () => new EncryptedFileSecretStore({ stateDir: dir, key: text }),
        (error: Error) => {
          assert.ok(error instanceof SecretStoreError);
          assert.match(
            error.message,
            /WORKSPACE_SECRET_KEY is not a 32-byte key in base64 or hex\. Generate one with `openssl rand -base64 32`/,
          );
          if (text) assert.ok(!error.message.includes(text));
          return true;
        },
      );
    }
  });

  it('reports a changed key and leaves the file as it was', async () => {
    await new EncryptedFileSecretStore({ stateDir: dir, key: randomBytes(32).toString('base64') }).set('k', 'value');
    const before = await readFile(path);
    const wrong = new EncryptedFileSecretStore({ stateDir: dir, key: randomBytes(32).toString('base64') });
    for (const attempt of [
      () => wrong.get('k'),
      () => wrong.set('k', 'other'),
      () => wrong.set('new', 'v'),
      () => wrong.delete('k'),
      () => wrong.accounts(''),
    ]) {
      await assert.rejects(attempt(), (error: Error) => {
        assert.ok(error instanceof SecretStoreError);
        assert.match(
          error.message,
          /^Cannot decrypt the secret store .*secrets\.enc\.json: it was written with another key than WORKSPACE_SECRET_KEY \(the key changed\?\)\. Restore the key/,
        );
        return true;
      });
    }
    assert.deepEqual(await readFile(path), before);
    assert.deepEqual(await readdir(dir), ['secrets.enc.json']);
  });

  it('does not create a new key when the key file of existing secrets is missing', async () => {
    await new EncryptedFileSecretStore({ stateDir: dir }).set('k', 'value');
    await rm(join(dir, 'secrets.key'));
    const before = await readFile(path);
    await assert.rejects(
      new EncryptedFileSecretStore({ stateDir: dir }).set('k2', 'v'),
      /exists but its key .*secrets\.key is missing\. Restore that file, or set WORKSPACE_SECRET_KEY/,
    );
    assert.deepEqual(await readdir(dir), ['secrets.enc.json']);
    assert.deepEqual(await readFile(path), before);
  });

  it('refuses a key file others can read and says how to fix it', { skip: !posix && 'POSIX modes only' }, async () => {
    await new EncryptedFileSecretStore({ stateDir: dir }).set('k', 'value');
    const keyPath = join(dir, 'secrets.key');
    await chmod(keyPath, 0o640);
    await assert.rejects(new EncryptedFileSecretStore({ stateDir: dir }).get('k'), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.match(error.message, /readable by other users \(mode 0640\)/);
      assert.ok(error.message.includes(`chmod 600 ${keyPath}`));
      return true;
    });
    assert.equal((await stat(keyPath)).mode & 0o777, 0o640);
  });

  it('refuses a damaged key file', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'secrets.key'), 'not a key\n', { mode: 0o600 });
    await assert.rejects(new EncryptedFileSecretStore({ stateDir: dir }).set('k', 'v'), /does not hold a 32-byte key in base64 or hex/);
  });

  it('detects a changed ciphertext and leaves the other entries readable', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('victim', 'victim-value');
    await store.set('bystander', 'bystander-value');
    const shape = await readShape();
    const data = Buffer.from(shape.entries.victim!.data, 'base64');
    data[0]! ^= 1;
    shape.entries.victim!.data = data.toString('base64');
    await writeShape(shape);
    await assert.rejects(store.get('victim'), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.match(
        error.message,
        /^The secret victim in .* failed its integrity check: the file was changed outside this app\. Set the secret again/,
      );
      return true;
    });
    assert.equal(await store.get('bystander'), 'bystander-value');
    await store.set('victim', 'new-victim-value');
    assert.equal(await store.get('victim'), 'new-victim-value');
  });

  it('detects entries swapped between accounts', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('alice', 'alice-token');
    await store.set('mallory', 'mallory-token');
    const shape = await readShape();
    [shape.entries.alice, shape.entries.mallory] = [shape.entries.mallory!, shape.entries.alice!];
    await writeShape(shape);
    await assert.rejects(store.get('alice'), /The secret alice .* failed its integrity check/);
    await assert.rejects(store.get('mallory'), /The secret mallory .* failed its integrity check/);
  });

  it('moves a corrupt file aside, reports it, and keeps refusing until someone decides', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('k', 'value');
    await writeFile(path, '{"version": 1, "keyId": "0123', { mode: 0o600 });
    await assert.rejects(store.get('k'), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.match(
        error.message,
        /^The secret store .*secrets\.enc\.json was unreadable \(it is not valid JSON\) and was moved to .*secrets\.enc\.json\.corrupt-.*\. Secrets are refused until/,
      );
      return true;
    });
    const asides = (await readdir(dir)).filter((name) => name.startsWith('secrets.enc.json.corrupt-'));
    assert.equal(asides.length, 1);
    assert.equal(await readFile(join(dir, asides[0]!), 'utf8'), '{"version": 1, "keyId": "0123');
    await assert.rejects(
      store.set('k', 'again'),
      /was moved to .*corrupt-.* because it was unreadable\. Secrets are refused until you fix that file and move it back, or delete it/,
    );
    await assert.rejects(store.accounts(''), /because it was unreadable/);

    await rm(join(dir, asides[0]!));
    await store.set('k', 'fresh');
    assert.equal(await store.get('k'), 'fresh');
  });

  it('treats malformed entries as a corrupt file', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('k', 'value');
    const shape = await readShape();
    shape.entries.k!.iv = 'not base64!';
    await writeShape(shape);
    await assert.rejects(store.get('k'), /unreadable \(the entry "k" is malformed\) and was moved to/);
  });

  it('refuses a file from a newer version without moving it', async () => {
    await writeFile(path, JSON.stringify({ version: 2, keyId: '0123456789abcdef', entries: {} }), { mode: 0o600 });
    await assert.rejects(
      new EncryptedFileSecretStore({ stateDir: dir }).get('k'),
      /written by a newer version of this app \(format version 2\)\. Update the app/,
    );
    assert.deepEqual(await readdir(dir), ['secrets.enc.json']);
  });

  it('keeps accounts whose names are object keys of JavaScript', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await store.set('__proto__', 'proto-value');
    await store.set('constructor', 'constructor-value');
    const reopened = new EncryptedFileSecretStore({ stateDir: dir });
    assert.equal(await reopened.get('__proto__'), 'proto-value');
    assert.equal(await reopened.get('constructor'), 'constructor-value');
    assert.equal(await reopened.get('toString'), undefined);
    assert.deepEqual(await reopened.accounts(''), ['__proto__', 'constructor']);
  });

  it('keeps every one of many concurrent writes in this process', async () => {
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.set(`n:${i}`, `v${i}`)));
    assert.equal((await store.accounts('n:')).length, 20);
    assert.equal(await store.get('n:7'), 'v7');
  });

  it('keeps every write of processes writing at the same time, with one key', async () => {
    // Children start together (Node takes a while to boot), so their writes overlap.
    const startAt = Date.now() + 2000;
    const script = (tag: string): string =>
      `import { EncryptedFileSecretStore } from ${moduleUrl('encrypted-file-store.ts')};
       const store = new EncryptedFileSecretStore({ stateDir: ${JSON.stringify(dir)} });
       await new Promise((resolve) => setTimeout(resolve, ${startAt} - Date.now()));
       for (let i = 0; i < 15; i++) await store.set('${tag}:' + i, '${tag}-value-' + i);
       console.log(JSON.stringify('done'));`;
    const results = await Promise.all(['p1', 'p2', 'p3'].map((tag) => runChild(script(tag))));
    for (const result of results) assert.equal(outcomeOf(result), 'done', result.stderr);
    const store = new EncryptedFileSecretStore({ stateDir: dir });
    assert.equal((await store.accounts('')).length, 45);
    assert.equal(await store.get('p2:9'), 'p2-value-9');
  });
});
