import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import { processGroupAlive, terminateProcessGroup } from './process-group.js';

let dir: string;

const state = async (pid: number): Promise<string | undefined> =>
  (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.[0];

describe('process groups', { skip: process.platform !== 'linux' && 'uses /proc' }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'machine-pgroup-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('sees a running group as alive, and ends it', async () => {
    const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    await waitFor(async () => (await state(child.pid!)) !== undefined, 10_000, 'sleep to start');
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
      await waitFor(async () => (pid = Number(await readFile(pidPath, 'utf8').catch(() => '0'))) > 0, 10_000, 'the pid file');
      await waitFor(async () => (await state(pid)) === 'Z', 10_000, 'a zombie');
      const started = Date.now();
      assert.equal(await processGroupAlive(pid), false);
      // A zombie counted as alive would hold this for the whole 30 s grace; a busy machine takes far less.
      await terminateProcessGroup(pid, 30_000);
      assert.ok(Date.now() - started < 10_000, 'no wait for a group with no live process');
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
