import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { SecretStoreError } from './secret-store.js';
import { withStateLock } from './state-lock.js';

describe('withStateLock', () => {
  let dir: string;
  let lock: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'state-lock-'));
    lock = join(dir, 'thing.lock');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs one holder at a time, names the holder in the file, and leaves nothing behind', async () => {
    let inside = 0;
    let most = 0;
    const holders: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, () =>
        withStateLock(lock, async () => {
          most = Math.max(most, ++inside);
          holders.push(await readFile(lock, 'utf8'));
          await sleep(5);
          inside--;
        }),
      ),
    );
    assert.equal(most, 1);
    assert.ok(holders.every((holder) => holder === `${process.pid}@${hostname()}\n`));
    assert.deepEqual(await readdir(dir), []);
  });

  it('releases the lock when the task fails', async () => {
    await assert.rejects(withStateLock(lock, async () => Promise.reject(new Error('task failed'))), /task failed/);
    assert.equal(await withStateLock(lock, async () => 'next'), 'next');
    assert.deepEqual(await readdir(dir), []);
  });

  it('breaks a lock left by a process of this machine that has died', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    await writeFile(lock, `${dead}@${hostname()}\n`);
    assert.equal(await withStateLock(lock, async () => 'ran', { timeoutMs: 2_000 }), 'ran');
    assert.deepEqual(await readdir(dir), []);
  });

  it('waits for a living holder and gives up with a message that says what to do', async () => {
    await writeFile(lock, `${process.pid}@${hostname()}\n`);
    const started = Date.now();
    await assert.rejects(withStateLock(lock, async () => 'ran', { timeoutMs: 300 }), (error: Error) => {
      assert.ok(error instanceof SecretStoreError);
      assert.equal(error.message, `Waited 0.3 s for the lock ${lock}, held by process ${process.pid}@${hostname()}. If no persona-mcp-workspace process is running there, delete ${lock} and try again.`);
      return true;
    });
    assert.ok(Date.now() - started >= 300);
    assert.equal(await readFile(lock, 'utf8'), `${process.pid}@${hostname()}\n`, 'a living holder keeps its lock');
  });

  it('waits for a holder on another machine rather than guessing it died', async () => {
    await writeFile(lock, `1@another-host.invalid\n`);
    await assert.rejects(withStateLock(lock, async () => 'ran', { timeoutMs: 100 }), /held by process 1@another-host\.invalid/);
  });

  it('takes the lock as soon as the holder lets go', async () => {
    await writeFile(lock, `${process.pid}@${hostname()}\n`);
    const waiting = withStateLock(lock, async () => 'ran', { timeoutMs: 5_000 });
    await sleep(100);
    await rm(lock);
    assert.equal(await waiting, 'ran');
  });
});
