import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandRunner } from '../command-runner.js';
import { waitFor } from '../../../test/support/wait.js';
import { LiveSandbox } from './live-sandbox.js';
import { PlaceSandbox } from './place-sandbox.js';
import { SandboxPool } from './sandbox-pool.js';

/*
 * Commands entered into a place's running sandbox (real bubblewrap, nsenter and setpriv): the same
 * closed machine as a bubblewrap per call, with each call's exit status, timeout and cancel.
 */
describe('a live sandbox per place', () => {
  let top: string;
  let ws: string;
  let alpha: string;
  let pool: SandboxPool;
  const runner = new CommandRunner({ maxTimeoutSeconds: 30 });
  const starts: LiveSandbox[] = [];
  const start = LiveSandbox.start.bind(LiveSandbox);

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'live-sandbox-')));
    ws = join(top, 'ws');
    alpha = join(ws, 'Crew', 'alpha');
    await mkdir(alpha, { recursive: true });
    await mkdir(join(ws, 'Crew', 'beta'), { recursive: true });
    pool = new SandboxPool(300);
    // Watched, not replaced: which sandboxes were started, to tell a reused one from a new one.
    LiveSandbox.start = async (...args) => {
      const sandbox = await start(...args);
      starts.push(sandbox);
      return sandbox;
    };
  });
  after(async () => {
    LiveSandbox.start = start;
    await pool.closeAll();
    await rm(top, { recursive: true, force: true });
  });

  const sandboxOf = (kind: 'place' | 'strict', folders: string[] = []) =>
    PlaceSandbox.open({ kind, folders }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir: join(top, 'state'),
      skillsDir: join(ws, '.agents', 'skills'),
      env: { PATH: process.env.PATH, HOME: '/nonexistent-home', WORKSPACE_SECRET_KEY: 'never inside' },
      sandboxes: pool,
    });
  const run = (kind: 'place' | 'strict', command: string, options: { timeout?: number; signal?: AbortSignal } = {}) =>
    runner.run(
      { command, ...(options.timeout && { timeout: options.timeout }) },
      { sandbox: sandboxOf(kind), ...(options.signal && { signal: options.signal }) },
    );

  it("runs calls in one sandbox: in the place's folder, with the clean environment, no capabilities, its own processes", async () => {
    const before = starts.length;
    const first = await run(
      'strict',
      'echo kept > /tmp/mark; pwd; echo "$HOME ${WORKSPACE_SECRET_KEY:-unset}"; grep CapEff /proc/self/status; kill -0 ' +
        process.pid +
        ' 2>/dev/null && echo host-visible || echo host-hidden',
    );
    assert.equal(first.exitCode, 0, first.stderr?.text);
    assert.equal(first.stdout.text, `${alpha}\n/nonexistent-home unset\nCapEff:\t0000000000000000\nhost-hidden\n`);
    const second = await run('strict', 'cat /tmp/mark');
    assert.equal(second.stdout.text, 'kept\n', 'the same sandbox: its own temp folder kept what the first call wrote');
    assert.equal(starts.length, before + 1, 'one sandbox for both calls');
  });

  it('passes on exit codes and signals, and stops a call at its timeout or when cancelled', async () => {
    assert.equal((await run('strict', 'exit 3')).exitCode, 3);
    const killed = await run('strict', 'kill -KILL $$');
    assert.deepEqual([killed.exitCode, killed.signal], [null, 'SIGKILL']);
    const began = Date.now();
    const slow = await run('strict', 'sleep 30', { timeout: 1 });
    assert.equal(slow.timedOut, true);
    assert.ok(Date.now() - began < 10_000, 'stopped at the timeout');
    const controller = new AbortController();
    const sleeping = join(alpha, 'sleep-began');
    const running = run('strict', `sleep 30 & touch ${sleeping}; wait`, { signal: controller.signal });
    // Cancelled once the sleep runs, so that there is one to end.
    await waitFor(
      () =>
        stat(sleeping).then(
          () => true,
          () => false,
        ),
      10_000,
      'the sleep to start',
    );
    controller.abort();
    const cancelled = await running;
    assert.equal(cancelled.cancelled, true);
    // The cancelled sleep is killed at once, but on a loaded machine may not be reaped yet when ps
    // looks: it must be gone within a few seconds, never stay.
    await waitFor(
      async () => (await run('strict', 'ps -e -o comm= | grep -c sleep || true')).stdout.text === '1\n',
      10_000,
      "only the sandbox's own sleeping program to be left",
    );
  });

  it('a new sandbox when the policy changes; the old one ends; an idle one ends', async () => {
    await run('strict', 'true');
    const strictBox = starts.at(-1)!;
    const placeRun = await run('place', `echo ok > ${alpha}/from-place; test -e ${ws}/Crew/beta && echo beta-visible || echo beta-hidden`);
    assert.equal(placeRun.stdout.text, 'beta-hidden\n');
    assert.equal(await readFile(join(alpha, 'from-place'), 'utf8'), 'ok\n');
    assert.notEqual(starts.at(-1), strictBox, 'place got a sandbox of its own');
    await strictBox.whenEnded;
    assert.equal(strictBox.alive, false, 'the replaced sandbox ended');
    const placeBox = starts.at(-1)!;
    await placeBox.whenEnded; // idle for 300 ms
    assert.equal(placeBox.alive, false);
    assert.equal((await run('place', 'true')).exitCode, 0, 'and the next call starts another');
  });

  it("a network namespace of its own under place or strict: only a loopback, the host's loopback servers out of reach directly", async () => {
    const server = createServer((_req, res) => res.end('host'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (const kind of ['place', 'strict'] as const) {
        const result = await run(
          kind,
          `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached`,
        );
        assert.equal(result.stdout.text, 'lo\n', `${kind}: ${result.stderr?.text}`);
        assert.match(result.stderr?.text ?? '', /Connection refused/);
      }
    } finally {
      server.close();
    }
  });

  it('a new sandbox when a folder the owner added appears', async () => {
    const extra = join(top, 'extra');
    const without = await runner.run({ command: `touch ${extra}/x` }, { sandbox: sandboxOf('strict', [extra]) });
    assert.notEqual(without.exitCode, 0);
    await mkdir(extra);
    const withIt = await runner.run({ command: `touch ${extra}/x && echo made` }, { sandbox: sandboxOf('strict', [extra]) });
    assert.equal(withIt.stdout.text, 'made\n', withIt.stderr?.text);
  });
});
