import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileSigningKeySource, keyIdOf, SigningKeyError } from './signing-key.js';

const posix = process.platform !== 'win32';

describe('FileSigningKeySource', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'signing-key-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a 32-byte key, mode 0600, on first use and returns the same key afterwards', async () => {
    const stateDir = join(dir, 'state', 'nested');
    const source = new FileSigningKeySource(stateDir);
    const key = await source.load();
    assert.equal(key.length, 32);
    assert.deepEqual(new Uint8Array(await readFile(join(stateDir, 'agent-signing-key'))), key);
    if (posix) assert.equal((await stat(source.path)).mode & 0o777, 0o600);
    assert.deepEqual(await new FileSigningKeySource(stateDir).load(), key);
    assert.deepEqual(await readdir(stateDir), ['agent-signing-key'], 'no temp files left behind');
  });

  it('gives every process the same key when several create it at once', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => new FileSigningKeySource(dir).load()));
    for (const key of keys) assert.deepEqual(key, keys[0]);
    assert.deepEqual(await readdir(dir), ['agent-signing-key']);
  });

  it('refuses a key file others can read and says how to fix it', { skip: !posix && 'POSIX modes only' }, async () => {
    const source = new FileSigningKeySource(dir);
    await source.load();
    await chmod(source.path, 0o644);
    await assert.rejects(source.load(), (error: Error) => {
      assert.ok(error instanceof SigningKeyError);
      assert.match(error.message, /mode 0644/);
      assert.ok(error.message.includes(`chmod 600 ${source.path}`));
      return true;
    });
    assert.equal((await stat(source.path)).mode & 0o777, 0o644, 'the mode is left for the owner to decide');
  });

  it('reads an existing key without ever creating one (what the move into the secret store needs)', async () => {
    const source = new FileSigningKeySource(dir);
    assert.equal(await source.loadExisting(), undefined);
    assert.deepEqual(await readdir(dir), []);
    const key = await source.load();
    assert.deepEqual(await source.loadExisting(), key);
  });

  it('refuses a key of the wrong length instead of replacing it', async () => {
    const source = new FileSigningKeySource(dir);
    await writeFile(source.path, 'short', { mode: 0o600 });
    await assert.rejects(source.load(), /has 5 bytes instead of 32.*Delete it/);
    assert.equal(await readFile(source.path, 'utf8'), 'short');
  });
});

describe('keyIdOf', () => {
  it('is 16 hex characters, stable for a key and different for another', () => {
    const a = new Uint8Array(32).fill(1);
    const b = new Uint8Array(32).fill(2);
    assert.match(keyIdOf(a), /^[0-9a-f]{16}$/);
    assert.equal(keyIdOf(a), keyIdOf(new Uint8Array(32).fill(1)));
    assert.notEqual(keyIdOf(a), keyIdOf(b));
  });
});
