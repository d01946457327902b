import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cgroupMounts, joinCommand, ownGroups, placeGroupName } from './cgroups.js';
import { defaultLimitValues } from './sandbox-limits.js';

// A hybrid machine as this one: cgroup v1 controllers, and a v2 tree without any.
const MOUNTINFO = [
  '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
  '34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate',
  '41 22 0:38 /container /mnt/with\\040space rw - cgroup cgroup rw,pids',
].join('\n');

describe('control groups', () => {
  it("finds the cgroup mounts and this process's groups in /proc", () => {
    const mounts = cgroupMounts(MOUNTINFO);
    assert.deepEqual(
      mounts.map((m) => [m.version, m.mountPoint, m.root, m.controllers.filter((c) => ['pids', 'memory', 'cpu'].includes(c))]),
      [
        [1, '/sys/fs/cgroup/cpu,cpuacct', '/', ['cpu']],
        [1, '/sys/fs/cgroup/memory', '/', ['memory']],
        [1, '/sys/fs/cgroup/pids', '/', ['pids']],
        [2, '/sys/fs/cgroup/unified', '/', []],
        [1, '/mnt/with space', '/container', ['pids']],
      ],
    );
    const own = ownGroups('12:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/user.slice\n0::/user.slice/session-2.scope\n');
    assert.deepEqual(
      [own.get('pids'), own.get('memory'), own.get('cpu'), own.get('cpuacct'), own.get('')],
      ['/', '/process_api/abc', '/user.slice', '/user.slice', '/user.slice/session-2.scope'],
    );
  });

  it("a place's group is named from its root, the same every time", () => {
    assert.equal(placeGroupName('Crew/alpha'), placeGroupName('Crew/alpha'));
    assert.notEqual(placeGroupName('Crew/alpha'), placeGroupName('Crew/beta'));
    assert.match(placeGroupName(''), /^place-[0-9a-f]{16}$/);
  });

  it('a command joins its group itself before the launcher runs (a shell writes its own pid, then execs)', async () => {
    assert.deepEqual(joinCommand(undefined, 'nsenter', ['--', 'bash']), { file: 'nsenter', args: ['--', 'bash'] });
    const dir = await mkdtemp(join(tmpdir(), 'pw-cgroup-'));
    try {
      // Ordinary files stand in for cgroup.procs: what is written there is the pid of the process that runs the launcher.
      const procs = [join(dir, 'pids.procs'), join(dir, 'memory.procs')];
      const { file, args } = joinCommand({ procs }, 'sh', ['-c', 'echo "$$ $0 $1"', 'launcher', "an 'argument'"]);
      const run = spawnSync(file, args, { encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const [pid, ...rest] = run.stdout.trim().split(' ');
      assert.equal(rest.join(' '), "launcher an 'argument'");
      for (const path of procs) assert.equal((await readFile(path, 'utf8')).trim(), pid);
      const gone = spawnSync(
        ...(Object.values(joinCommand({ procs: [join(dir, 'missing', 'cgroup.procs')] }, 'true', [])) as [string, string[]]),
        { encoding: 'utf8' },
      );
      assert.equal(gone.status, 126);
      assert.match(gone.stderr, /The place's limits could not be applied \(its control group is gone\): run the command again/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("defaults normal work never meets: 4096 processes, half the memory, 2 GiB of /tmp; the machine's settings win", () => {
    assert.deepEqual(defaultLimitValues({}, 16 * 1024 ** 3), { processes: 4096, memoryMb: 8192, tmpMb: 2048 });
    assert.deepEqual(
      defaultLimitValues({}, 1024 ** 3),
      { processes: 4096, memoryMb: 512, tmpMb: 512 },
      'a small machine: /tmp no larger than the memory limit',
    );
    assert.deepEqual(defaultLimitValues({ processes: 100, tmpMb: 10 }, 16 * 1024 ** 3), { processes: 100, memoryMb: 8192, tmpMb: 10 });
  });
});
