import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { processGroupAlive, terminateProcessGroup } from './process-group.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'machine-pgroup-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const state = async (pid: number): Promise<string | undefined> => (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.[0];

describe('process groups', { skip: process.platform !== 'linux' && 'uses /proc' }, () => {
  it('sees a running group as alive, and ends it', async () => {
    const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    await until(async () => (await state(child.pid!)) !== undefined, 'sleep to start');
    assert.equal(await processGroupAlive(child.pid!), true);
    await terminateProcessGroup(child.pid!, 2000);
    assert.equal(await processGroupAlive(child.pid!), false);
  });

  it('does not count a zombie nobody reaps as alive', async () => {
    const pidPath = join(dir, 'zombie.pid');
    // The group leader writes its pid and exits; its parent then execs `sleep`, which never reaps it,
    // as happens to orphans under a container init that does not reap.
    // The leader exits only once its parent is `sleep`: exiting earlier, bash could still reap it.
    const leader = `echo $$ > ${pidPath}; while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done`;
    const parent = spawn('bash', ['-c', `(setsid bash -c '${leader}') & exec sleep 30`], { stdio: 'ignore' });
    try {
      let pid = 0;
      await until(async () => (pid = Number(await readFile(pidPath, 'utf8').catch(() => '0'))) > 0, 'the pid file');
      await until(async () => (await state(pid)) === 'Z', 'a zombie');
      const started = Date.now();
      assert.equal(await processGroupAlive(pid), false);
      await terminateProcessGroup(pid, 2000);
      assert.ok(Date.now() - started < 1000, 'no wait for a group with no live process');
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
