import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandRunner, type BashResult } from '../command-runner.js';
import { waitFor } from '../../../test/support/wait.js';
import { howToEnter, SANDBOX_LAUNCHER, type EnterMethod } from './bubblewrap-check.js';
import { placeGroupName } from './cgroups.js';
import { LiveSandbox } from './live-sandbox.js';
import { PlaceSandbox } from './place-sandbox.js';
import { defaultLimitValues, SandboxLimits } from './sandbox-limits.js';
import { SandboxPool } from './sandbox-pool.js';

/*
 * The sandbox launcher (sandbox-enter.c, built into dist/native by the build where a C compiler is
 * found), run for real against a place's live sandbox: what enters it, what the command is left
 * with, how it stops and how it fails; and the nsenter chain it replaces, still used where it is
 * not built.
 */
const hasCompiler = spawnSync('cc', ['--version']).status === 0;
const skip = process.platform !== 'linux' ? 'Linux only' : false;

/** Host processes whose command line holds `marker`, with their parent and program. */
function processesWith(marker: string): Array<{ pid: number; ppid: number; exe: string; cgroup: string }> {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({
        pid: Number(entry),
        ppid,
        exe: readlinkSync(`/proc/${entry}/exe`),
        cgroup: readFileSync(`/proc/${entry}/cgroup`, 'utf8'),
      });
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}

describe('the sandbox launcher', { skip }, () => {
  let top: string;
  let ws: string;
  let pool: SandboxPool;
  let limits: SandboxLimits;
  let live: LiveSandbox;
  const runner = new CommandRunner({ maxTimeoutSeconds: 30 });
  const env = { PATH: process.env.PATH, HOME: '/nonexistent-home' };
  const launcher: EnterMethod = { kind: 'launcher', path: SANDBOX_LAUNCHER };

  before(async () => {
    top = realpathSync(await mkdtemp(join(tmpdir(), 'sandbox-enter-')));
    ws = join(top, 'ws');
    await mkdir(join(ws, 'Crew', 'alpha'), { recursive: true });
    pool = new SandboxPool(60_000);
    limits = await SandboxLimits.open(defaultLimitValues());
    const start = LiveSandbox.start.bind(LiveSandbox);
    LiveSandbox.start = async (...args) => (live = await start(...args));
    try {
      const result = await runner.run({ command: 'true' }, { sandbox: sandboxOf('place') });
      assert.equal(result.exitCode, 0, result.stderr?.text);
    } finally {
      LiveSandbox.start = start;
    }
  });
  after(async () => {
    await pool.closeAll();
    await limits.close();
    await rm(top, { recursive: true, force: true });
  });

  const sandboxOf = (kind: 'place' | 'strict') =>
    PlaceSandbox.open({ kind, folders: [] }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir: join(top, 'state'),
      skillsDir: join(ws, '.agents', 'skills'),
      env,
      sandboxes: pool,
      limits,
    });
  /** `command` entered into the place's live sandbox `how`, without the start script (what the launcher does alone). */
  const enter = (command: string, how: EnterMethod, signal?: AbortSignal): Promise<BashResult> =>
    runner.run({ command }, { sandbox: { launch: async (text) => live.launch(text, env, how) }, ...(signal && { signal }) });

  it(
    'is built where a C compiler is, and is what the server enters sandboxes with',
    { skip: !hasCompiler && 'no C compiler' },
    async () => {
      assert.deepEqual(await howToEnter(env), launcher);
      const marker = `marker-${process.pid}-chain`;
      const running = runner.run({ command: `: ${marker}; sleep 30; true`, timeout: 20 }, { sandbox: sandboxOf('place') });
      // node -> sandbox-enter -> bash (no sh, nsenter or setpriv between), bash in the place's control group.
      let chain: ReturnType<typeof processesWith> = [];
      let bash: (typeof chain)[number] | undefined;
      await waitFor(() => (bash = (chain = processesWith(marker)).find((p) => p.exe.endsWith('/bash'))), 10_000, 'the command to run');
      const enterer = chain.find((p) => p.pid === bash!.ppid)!;
      assert.equal(enterer.exe, realpathSync(SANDBOX_LAUNCHER));
      assert.equal(enterer.ppid, process.pid);
      if (limits.support.how) {
        for (const line of bash!.cgroup.split('\n').filter((l) => /pids|memory/.test(l.split(':')[1] ?? '')))
          assert.ok(line.endsWith(`/${placeGroupName('Crew/alpha')}`), `in the place's group: ${line}`);
      }
      for (const p of chain) process.kill(p.pid, 'SIGKILL');
      await running;
    },
  );

  for (const how of [launcher, { kind: 'nsenter' } as const])
    it(
      `leaves the command no capability and no new privileges (${how.kind})`,
      { skip: how.kind === 'launcher' && !hasCompiler && 'no C compiler' },
      async () => {
        const result = await enter("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; exit 7", how);
        assert.equal(result.exitCode, 7, result.stderr?.text);
        assert.equal(
          result.stdout.text,
          ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'].map((name) => `${name}:\t0000000000000000\n`).join('') + 'NoNewPrivs:\t1\n',
        );
      },
    );

  it('closes every descriptor but stdio before the command starts', { skip: !hasCompiler && 'no C compiler' }, async () => {
    // The sandbox's namespaces, root and folder are the launcher's descriptors 3 and up.
    const result = await enter('ls /proc/$$/fd; true', launcher);
    assert.equal(result.stdout.text, '0\n1\n2\n', result.stderr?.text);
  });

  it(
    'ends the whole command group when stopped, and passes a stop sent to it alone on to the command',
    { skip: !hasCompiler && 'no C compiler' },
    async () => {
      const marker = `marker-${process.pid}-stop`;
      const started = join(ws, 'Crew', 'alpha', 'started');
      const controller = new AbortController();
      // Background processes named for the test (exec -a), to find them on the host.
      const running = enter(
        `(exec -a ${marker} sleep 300) & (exec -a ${marker} sleep 300) & touch ${started}; wait`,
        launcher,
        controller.signal,
      );
      await waitFor(
        () =>
          stat(started).then(
            () => true,
            () => false,
          ),
        10_000,
        'the command to start',
      );
      controller.abort();
      assert.equal((await running).cancelled, true);
      assert.deepEqual(processesWith(marker), [], 'nothing of the command is left');

      const trapped = enter(
        `: ${marker}; trap 'echo got-term; exit 5' TERM; touch ${started}-2; (exec -a ${marker} sleep 300) & wait`,
        launcher,
      );
      await waitFor(
        () =>
          stat(`${started}-2`).then(
            () => true,
            () => false,
          ),
        10_000,
        'the command to start',
      );
      const enterer = processesWith(marker).find((p) => p.exe === realpathSync(SANDBOX_LAUNCHER))!;
      process.kill(enterer.pid, 'SIGTERM');
      const result = await trapped;
      assert.equal(result.exitCode, 5, 'the command ran its trap and exited as it chose; the launcher with it');
      assert.equal(result.stdout.text, 'got-term\n');
      for (const p of processesWith(marker)) process.kill(p.pid, 'SIGKILL');
    },
  );

  it('fails closed: a step that fails runs nothing and says which', { skip: !hasCompiler && 'no C compiler' }, async () => {
    const made = join(top, 'ran');
    const real = join(top, 'procs');
    await writeFile(real, '');
    await symlink(real, join(top, 'procs-link'));
    await mkdir(join(top, 'group'));
    await symlink(join(top, 'group'), join(top, 'group-link'));
    await writeFile(join(top, 'group', 'cgroup.procs'), '');
    const folder = openSync(top, 'r');
    const file = openSync(real, 'r');
    const launch = async (args: string[]) => {
      const child = spawn(SANDBOX_LAUNCHER, [...args, '--', 'bash', '-c', `touch ${made}`], {
        stdio: ['ignore', 'ignore', 'pipe', folder, file],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, stderr };
    };
    try {
      for (const [args, message] of [
        [
          ['--cgroup-procs', join(top, 'procs-link'), '--root', '3', '--wd', '3'],
          /control group .*procs-link: Too many levels of symbolic links/,
        ],
        [
          ['--cgroup-procs', join(top, 'group-link', 'cgroup.procs'), '--root', '3', '--wd', '3'],
          /control group .*group-link\/cgroup.procs/,
        ],
        [['--cgroup-procs', join(top, 'gone', 'cgroup.procs'), '--root', '3', '--wd', '3'], /No such file or directory/],
        [['--ns', 'mnt:4', '--root', '3', '--wd', '3'], /could not enter the sandbox's mnt namespace: Invalid argument/],
        [['--ns', 'mnt:9', '--root', '3', '--wd', '3'], /mnt namespace: Bad file descriptor/],
        [['--ns', 'time:3', '--root', '3', '--wd', '3'], /bad namespace "time:3"/],
        [['--root', '4', '--wd', '3'], /could not change root/],
        [['--root', '3', '--wd', '4'], /could not change to the place's folder/],
        [['--root', '3'], /--root and --wd are required/],
        [['--root', '3', '--wd', '2'], /bad descriptor "2"/],
      ] as const) {
        const { code, stderr } = await launch([...args]);
        assert.equal(code, 126, `${args.join(' ')}: ${stderr}`);
        assert.match(stderr, message);
        assert.match(stderr, /^sandbox-enter: .*; nothing was run\.\n$/);
      }
      await assert.rejects(stat(made), 'no command ran');
      assert.equal(await readFile(real, 'utf8'), '', 'nothing written through a link');
      assert.equal(await readFile(join(top, 'group', 'cgroup.procs'), 'utf8'), '');
    } finally {
      closeSync(folder);
      closeSync(file);
    }
  });

  it('falls back to nsenter and setpriv where the launcher is not there', async () => {
    assert.deepEqual(await howToEnter(env, join(top, 'not-built', 'sandbox-enter')), { kind: 'nsenter' });
    const result = await enter('pwd; exit 4', { kind: 'nsenter' });
    assert.deepEqual([result.exitCode, result.stdout.text], [4, `${join(ws, 'Crew', 'alpha')}\n`], result.stderr?.text);
  });
});
