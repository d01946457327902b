import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import { FileLockTimeoutError, withFileLock } from './file-lock.js';

/** The pid of a process that has exited (and was reaped), so nothing answers to it. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  return child.pid!;
}

function holderText(pid: number, host = hostname()): string {
  return JSON.stringify({ pid, host, token: 'someone-else' });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('withFileLock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'file-lock-'));
    lockPath = join(dir, 'x.lock');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs one holder at a time, so no read-modify-write is lost', async () => {
    const counter = join(dir, 'counter');
    await writeFile(counter, '0');
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(lockPath, async () => {
          most = Math.max(most, ++inside);
          const value = Number(await readFile(counter, 'utf8'));
          await sleep(1);
          await writeFile(counter, String(value + 1));
          inside--;
        }),
      ),
    );
    assert.equal(await readFile(counter, 'utf8'), '20');
    assert.equal(most, 1);
  });

  it("serves this process's waiters in the order they asked, not whichever polls first", async () => {
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withFileLock(lockPath, async () => {
          order.push(i);
          await sleep(15);
        }),
      ),
    );
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('lets a waiter behind a slow task of this process give up at its deadline, and the next one still waits its turn', async () => {
    let release!: () => void;
    const slow = withFileLock(lockPath, () => new Promise<void>((resolve) => (release = resolve)));
    const impatient = withFileLock(lockPath, async () => 'impatient', { timeoutMs: 100 });
    let nextRan = false;
    const next = withFileLock(lockPath, async () => {
      nextRan = true;
      return 'next';
    });
    await assert.rejects(
      impatient,
      (error: unknown) => error instanceof FileLockTimeoutError && /other tasks of this process/.test(error.message),
    );
    assert.equal(nextRan, false, 'the slow task still holds the lock');
    release();
    await slow;
    assert.equal(await next, 'next');
    assert.equal(await exists(lockPath), false);
  });

  it('gives back what the task returns, holds a file naming this process meanwhile, and removes it after', async () => {
    const result = await withFileLock(lockPath, async () => {
      const holder = JSON.parse(await readFile(lockPath, 'utf8'));
      assert.equal(holder.pid, process.pid);
      assert.equal(holder.host, hostname());
      assert.match(holder.token, /^[0-9a-f]{24}$/);
      if (process.platform !== 'win32') assert.equal((await stat(lockPath)).mode & 0o777, 0o600);
      return 7;
    });
    assert.equal(result, 7);
    assert.equal(await exists(lockPath), false);
  });

  it('releases the lock when the task throws', async () => {
    await assert.rejects(
      withFileLock(lockPath, async () => {
        throw new Error('task failed');
      }),
      /task failed/,
    );
    assert.equal(await exists(lockPath), false);
  });

  it('takes over at once a lock of a dead process on this host', async () => {
    await writeFile(lockPath, holderText(await deadPid()));
    const started = Date.now();
    assert.equal(await withFileLock(lockPath, async () => 'mine', { staleMs: 60_000, timeoutMs: 3_000 }), 'mine');
    assert.ok(Date.now() - started < 2_000);
  });

  it('waits for a live holder and then reports who holds it', async () => {
    await writeFile(lockPath, holderText(process.pid));
    const error = await withFileLock(lockPath, async () => 'never', { staleMs: 60_000, timeoutMs: 150 }).then(
      () => assert.fail('acquired a held lock'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof FileLockTimeoutError);
    assert.equal(error.lockPath, lockPath);
    assert.match(error.message, new RegExp(`held by process ${process.pid} on `));
    assert.match(error.message, /delete that file/);
    assert.equal(await readFile(lockPath, 'utf8'), holderText(process.pid), 'left as it was');
  });

  it('gets the lock as soon as a live holder lets go', async () => {
    await writeFile(lockPath, holderText(process.pid));
    let released = false;
    setTimeout(() => {
      released = true;
      void rm(lockPath);
    }, 100);
    assert.equal(
      await withFileLock(lockPath, async () => (released ? 'mine' : 'taken from the holder'), { staleMs: 60_000, timeoutMs: 5_000 }),
      'mine',
    );
  });

  it('keeps the lock for a live holder whose task outlasts staleMs, refreshing it meanwhile', async () => {
    let inside = false;
    let overlapped = false;
    const slow = withFileLock(
      lockPath,
      async () => {
        inside = true;
        // Well past staleMs: a slow keychain, say.
        await sleep(2_500);
        inside = false;
      },
      { staleMs: 1_000 },
    );
    await waitFor(() => inside, 5_000, 'the slow holder to take the lock');
    const next = await withFileLock(lockPath, async () => ((overlapped = inside), 'after'), { staleMs: 1_000, timeoutMs: 10_000 });
    await slow;
    assert.equal(next, 'after');
    assert.equal(overlapped, false, 'the second holder ran while the first still held the lock');
  });

  it('takes over a lock not refreshed for staleMs even if its holder seems alive (a reused pid, a hung holder)', async () => {
    await writeFile(lockPath, holderText(process.pid));
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath, old, old);
    assert.equal(await withFileLock(lockPath, async () => 'mine', { staleMs: 30_000, timeoutMs: 1_000 }), 'mine');
  });

  it('does not judge a pid of another host, only its age', async () => {
    await writeFile(lockPath, holderText(await deadPid(), 'some-other-host'));
    await assert.rejects(
      withFileLock(lockPath, async () => 'never', { staleMs: 60_000, timeoutMs: 150 }),
      FileLockTimeoutError,
    );
    const old = new Date(Date.now() - 120_000);
    await utimes(lockPath, old, old);
    assert.equal(await withFileLock(lockPath, async () => 'mine', { staleMs: 60_000, timeoutMs: 1_000 }), 'mine');
  });

  it('judges an unfinished (empty) lock by its age only', async () => {
    await writeFile(lockPath, '');
    await assert.rejects(
      withFileLock(lockPath, async () => 'never', { staleMs: 60_000, timeoutMs: 150 }),
      /did not finish writing it/,
    );
    const old = new Date(Date.now() - 120_000);
    await utimes(lockPath, old, old);
    assert.equal(await withFileLock(lockPath, async () => 'mine', { staleMs: 60_000, timeoutMs: 1_000 }), 'mine');
  });

  it('leaves alone a lock that was taken over from it meanwhile', async () => {
    await withFileLock(lockPath, async () => {
      await writeFile(lockPath, holderText(process.pid));
    });
    assert.equal(await readFile(lockPath, 'utf8'), holderText(process.pid));
  });
});
