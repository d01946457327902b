import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LOCAL_SERVER_SCRIPT } from '../../../e2e/fixtures/local-server.js';
import { waitFor } from '../../../test/support/wait.js';
import { LocalUpstream } from './local-upstream.js';
import { StderrLog } from './stderr-log.js';

// One local server's process over its life, on the real small stdio server of the tests run with
// node: started on first use, ended after being idle, started again on the next use, and ended and
// started again when the place's policy changes.

const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

describe('LocalUpstream', () => {
  let dir: string;
  let policy = 'place';
  let upstream: LocalUpstream;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-local-upstream-'));
    upstream = new LocalUpstream(
      { name: 'u1__tiny', displayName: 'Tiny' },
      {
        start: async () => ({
          launch: { file: process.execPath, args: [LOCAL_SERVER_SCRIPT], env: { PATH: process.env.PATH } },
          policyKey: policy,
          secrets: [],
          commandLine: `node ${LOCAL_SERVER_SCRIPT}`,
        }),
        policyKey: async () => policy,
        log: new StderrLog(join(dir, 'tiny.log')),
        timeoutMs: 10_000,
        idleMs: 400,
      },
    );
  });
  after(async () => {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts on first use, not before', async () => {
    assert.equal(upstream.status().state, 'stopped');
    assert.match(upstream.status().stopped!, /starts on first use/);
    assert.equal(text(await upstream.call('echo', { text: 'hi' })), 'hi');
    assert.equal(upstream.status().state, 'running');
  });

  it('ends the process once idle, and starts a new one on the next use', async () => {
    const first = Number(text(await upstream.call('pid', {})));
    await waitFor(() => upstream.status().state === 'stopped', 10_000, 'the idle end');
    assert.equal(upstream.status().state, 'stopped');
    assert.match(upstream.status().stopped!, /idle for 0 s; it starts again on the next use/);
    assert.throws(() => process.kill(first, 0), /ESRCH/, 'the idle process is gone');
    const second = Number(text(await upstream.call('pid', {})));
    assert.notEqual(second, first);
  });

  it("ends the process when the place's policy changes, and the next use runs under the new one", async () => {
    const first = Number(text(await upstream.call('pid', {})));
    policy = 'strict';
    const second = Number(text(await upstream.call('pid', {})));
    assert.notEqual(second, first);
    assert.throws(() => process.kill(first, 0), /ESRCH/);
  });
});

describe('LocalUpstream: what its status says while it stops', () => {
  let dir: string;
  let upstream: LocalUpstream;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-local-stopping-'));
    upstream = new LocalUpstream(
      { name: 'u1__slow', displayName: 'Slow to exit' },
      {
        start: async () => ({
          // It takes 600 ms to exit once its stdin is closed.
          launch: { file: process.execPath, args: [LOCAL_SERVER_SCRIPT], env: { PATH: process.env.PATH, TINY_MODE: 'linger' } },
          policyKey: 'place',
          secrets: [],
          commandLine: `node ${LOCAL_SERVER_SCRIPT}`,
        }),
        policyKey: async () => 'place',
        log: new StderrLog(join(dir, 'slow.log')),
        timeoutMs: 10_000,
        idleMs: 300,
      },
    );
  });
  after(async () => {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the exit as the reason of a call that failed while its server was dying, not the broken pipe', async () => {
    assert.equal(text(await upstream.call('crash', { dyingMs: 300 })), 'dying');
    await assert.rejects(upstream.call('echo', { text: 'late' }), (error: Error) => {
      assert.match(error.message, /was ended by SIGKILL/);
      assert.doesNotMatch(error.message, /EPIPE/);
      return true;
    });
  });

  it('says stopping, with the reason, until the process has exited; then stopped, for that reason', async () => {
    const pid = Number(text(await upstream.call('pid', {})));
    await waitFor(() => upstream.status().state !== 'running', 10_000, 'the idle stop to begin');
    const seen = new Set<string>();
    for (;;) {
      const status = upstream.status();
      seen.add(status.state);
      const alive = (() => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      })();
      if (status.state === 'stopped') {
        assert.equal(alive, false, 'stopped only once the process is gone');
        assert.match(status.stopped!, /idle for 0 s; it starts again on the next use/);
        break;
      }
      assert.equal(status.state, 'stopping');
      assert.equal(status.pid, pid);
      assert.match(status.stopped!, /idle for 0 s/);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(seen.has('stopping'), 'it said stopping while the process exited');
  });
});

describe('LocalUpstream: a cancelled check', () => {
  it('ends the process of a server that never answers initialize, and reports no failure', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pw-local-cancel-'));
    const failures: string[] = [];
    const upstream = new LocalUpstream(
      { name: 'u1__mute', displayName: 'Mute' },
      {
        start: async () => ({
          launch: { file: process.execPath, args: [LOCAL_SERVER_SCRIPT], env: { PATH: process.env.PATH, TINY_MODE: 'mute' } },
          policyKey: 'place',
          secrets: [],
          commandLine: `node ${LOCAL_SERVER_SCRIPT}`,
        }),
        policyKey: async () => 'place',
        log: new StderrLog(join(dir, 'mute.log')),
        timeoutMs: 60_000,
        idleMs: 60_000,
        onFailure: (error) => failures.push(error.message),
      },
    );
    try {
      const abort = new AbortController();
      const checking = upstream.check(abort.signal);
      const started = await waitFor(
        () => upstream.status().stderr.find((line) => line.includes('starting slowly')),
        10_000,
        'the process to start',
      );
      const pid = Number(/pid (\d+)/.exec(started)![1]);
      abort.abort();
      await assert.rejects(checking);
      await waitFor(() => upstream.status().state === 'stopped', 10_000, 'the process to be ended');
      assert.match(upstream.status().stopped!, /its check was cancelled/);
      assert.throws(() => process.kill(pid, 0), /ESRCH/, 'its process is gone');
      assert.deepEqual(failures, [], 'a cancel is no failure of the server');
    } finally {
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
