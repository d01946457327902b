import { tmpdir } from 'node:os';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture } from '../../../e2e/fixtures/upstream-server.js';
import { waitFor } from '../../../test/support/wait.js';
import type { PlaceConnection } from '../store/connection-store.js';
import { ConnectionHealth } from './connection-health.js';
import { Gateway } from './gateway.js';

function connectionTo(url: string, name = 'u0123abcd__fixture'): PlaceConnection {
  return Object.freeze({
    name,
    catalogId: 'fixture',
    displayName: 'Fixture',
    url,
    transport: 'streamable-http',
    auth: { kind: 'none' },
    addedAt: new Date().toISOString(),
    owner: 'local',
    storeId: '0123abcd'.padEnd(64, '0'),
    root: 'Crew/alpha',
  } as const);
}

describe('ConnectionHealth', () => {
  let upstream: UpstreamFixture;
  let gateway: Gateway;
  let health: ConnectionHealth;
  const changed: string[] = [];

  before(async () => {
    upstream = await startUpstream();
    // Remote connections only here: a local one would not start.
    const local = {
      start: () => Promise.reject(new Error('no local servers in this test')),
      policyKey: async () => '',
      logDir: tmpdir(),
      idleMs: 60_000,
    };
    // No test here waits for a timeout: a long one keeps a first request on a busy machine (which
    // loads the client and HTTP modules) from being taken for a server that does not answer.
    gateway = new Gateway({
      timeoutMs: 10_000,
      allowPrivateNetwork: true,
      appPorts: () => [],
      credentials: async () => ({}),
      signedFetch: (_c, base) => base,
      local,
    });
    health = new ConnectionHealth({ gateway, firstBackoffMs: 200, maxBackoffMs: 800 });
    gateway.onFailure((c, error) => health.failed(c, error));
    health.onChange((root) => changed.push(root));
  });
  after(async () => {
    health.close();
    await gateway.closeAll();
    await upstream.close();
  });

  const initializes = () => upstream.requests.filter((r) => r['mcp-session-id'] === undefined).length;

  it('knows nothing before a check, then the tools and when it checked; places hear that tools came', async () => {
    const connection = connectionTo(upstream.url);
    assert.deepEqual(health.health(connection), { last: undefined, checking: false, errors: [] });
    const checking = health.check(connection);
    assert.equal(health.health(connection).checking, true);
    const measured = await checking;
    assert.equal(measured.kind, 'ok');
    assert.equal(measured.kind === 'ok' && measured.tools.length, 5);
    assert.deepEqual(changed, ['Crew/alpha']);
    // The same tools again: nobody is told.
    await health.check(connection);
    assert.deepEqual(changed, ['Crew/alpha']);
  });

  it('re-checks a failing server on its own with growing waits, not once per failure, and stops when it is back', async () => {
    const connection = connectionTo(upstream.url);
    upstream.setMode('http-500');
    // When each check starts, as every surface hears it.
    const starts: number[] = [];
    const stop = health.onState((c) => {
      if (c.name === connection.name && health.health(c).checking) starts.push(Date.now());
    });
    const failed = await health.check(connection);
    assert.equal(failed.kind === 'failed' && failed.problem, 'unreachable');
    assert.ok(failed.kind === 'failed' && failed.nextCheckAt - failed.checkedAt === 200, 'the first wait is the first backoff');
    assert.equal(changed.at(-1), 'Crew/alpha', 'its tools went away');
    // Three re-checks on its own, each after a longer wait: 0.2 s, 0.4 s, then 0.8 s (the maximum).
    // Timers never fire early, so the gaps are at least that however busy the machine is.
    await waitFor(() => starts.length >= 4 && !health.health(connection).checking, 10_000, 'three re-checks');
    stop();
    const gaps = starts.slice(1, 4).map((at, i) => at - starts[i]!);
    assert.ok(gaps[0]! >= 195 && gaps[1]! >= 395 && gaps[2]! >= 795, `gaps between checks: ${gaps.join(', ')} ms`);
    const last = health.health(connection).last;
    assert.ok(last?.kind === 'failed' && last.nextCheckAt - last.checkedAt === 800, 'the wait stops growing at the maximum');
    assert.equal(health.health(connection).errors.length, 1, 'the same error is logged once');

    const heard = changed.length;
    upstream.setMode('ok');
    await waitFor(() => health.health(connection).last?.kind === 'ok', 10_000, 'a re-check to find the server back');
    assert.equal(changed.length, heard + 1, 'places heard that the tools came back');
    const after = initializes();
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(initializes(), after, 'no re-checks once it works');
  });

  it('starts one check for many failed calls, and none after the connection is forgotten', async () => {
    const connection = connectionTo(upstream.url, 'u0123abcd__other');
    await health.check(connection);
    upstream.setMode('http-500');
    const start = initializes();
    await Promise.all(
      Array.from({ length: 5 }, async () => (await gateway.upstream(connection)).call('echo', { text: 'x' }).catch(() => {})),
    );
    await waitFor(() => health.health(connection).last?.kind === 'failed', 10_000, 'the failed calls to be checked');
    health.forget(connection);
    const forgotten = initializes();
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(initializes(), forgotten, 'no re-check of a forgotten connection');
    // The five calls opened at most a few sessions between them: not one check per call.
    assert.ok(forgotten - start <= 3, `${forgotten - start} sessions opened`);
    upstream.setMode('ok');
  });

  it('cancels a check of a server that accepts and never answers: its request ends, and it says cancelled until checked again', async () => {
    const stuck = await startUpstream({ name: 'stuck' });
    stuck.setMode('hang');
    const connection = connectionTo(stuck.url, 'u0123abcd__stuck');
    const states: string[] = [];
    const stop = health.onState((c) => c.name === connection.name && states.push(health.health(c).checking ? 'checking' : 'done'));
    try {
      const checking = health.check(connection);
      await waitFor(() => stuck.requests.length > 0 && stuck.openSockets() > 0, 10_000, 'the check to reach the server');
      assert.equal(health.health(connection).checking, true);
      await health.cancel(connection);
      const measured = await checking;
      assert.equal(measured.kind, 'cancelled');
      assert.match(
        measured.kind === 'cancelled' ? measured.reason : '',
        /^The check was cancelled after \d+ s, before the server answered\. Retry/,
      );
      assert.equal(health.health(connection).checking, false);
      assert.deepEqual(health.health(connection).errors, [], 'a cancel is no error of the server');
      // Really ended on the server's side: the request's connection is closed, not left to its timeout.
      await waitFor(() => stuck.openSockets() === 0, 5_000, 'the request to the stuck server to be closed');
      assert.deepEqual(states, ['checking', 'done'], 'every surface heard it start and end');
      // Not checked again on its own: the person who cancelled it says when (Retry).
      const asked = stuck.requests.length;
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(stuck.requests.length, asked, 'no re-check after a cancel');
      health.ensureChecked(connection);
      assert.equal(health.health(connection).last?.kind, 'cancelled');
      // Retry asks it again.
      stuck.setMode('ok');
      assert.equal((await health.check(connection)).kind, 'ok');
    } finally {
      stop();
      health.forget(connection);
      await stuck.close();
    }
  });

  it('ends a check that runs when it closes: shutdown does not wait for a server that never answers', async () => {
    const stuck = await startUpstream({ name: 'stuck' });
    stuck.setMode('hang');
    const own = new ConnectionHealth({ gateway, firstBackoffMs: 200, maxBackoffMs: 800 });
    const connection = connectionTo(stuck.url, 'u0123abcd__closing');
    try {
      const checking = own.check(connection);
      await waitFor(() => stuck.openSockets() > 0, 10_000, 'the check to reach the server');
      own.close();
      assert.equal((await checking).kind, 'cancelled');
      await waitFor(() => stuck.openSockets() === 0, 5_000, 'the request to the stuck server to be closed');
    } finally {
      await stuck.close();
    }
  });

  it('checks again for a person who asks while a check runs: the answer comes from a check begun after the ask', async () => {
    const changing = await startUpstream({ name: 'changing' });
    changing.setMode('hang');
    // Its own gateway with a short wait, so that the check begun before the ask ends soon.
    const quick = new Gateway({
      timeoutMs: 1_500,
      allowPrivateNetwork: true,
      appPorts: () => [],
      credentials: async () => ({}),
      signedFetch: (_c, base) => base,
      local: {
        start: () => Promise.reject(new Error('no local servers in this test')),
        policyKey: async () => '',
        logDir: tmpdir(),
        idleMs: 60_000,
      },
    });
    const own = new ConnectionHealth({ gateway: quick, firstBackoffMs: 60_000, maxBackoffMs: 60_000 });
    const connection = connectionTo(changing.url, 'u0123abcd__changing');
    try {
      const before = own.check(connection);
      await waitFor(() => changing.openSockets() > 0, 10_000, 'the first check to reach the server');
      // What the person changed, then their Test: joining the check already running would answer
      // what the server said before the change.
      changing.setMode('ok');
      const asked = own.checkAgain(connection);
      await before;
      const measured = await asked;
      assert.equal(measured.kind, 'ok', JSON.stringify(measured));
      assert.equal(own.health(connection).last?.kind, 'ok');

      // Cancelled while the ask waits for it: the ask hears the cancel, and no new check starts.
      changing.setMode('hang');
      const stuck = own.check(connection);
      await waitFor(() => own.health(connection).checking, 10_000, 'a check to run');
      const waiting = own.checkAgain(connection);
      await own.cancel(connection);
      assert.equal((await stuck).kind, 'cancelled');
      assert.equal((await waiting).kind, 'cancelled');
      assert.equal(own.health(connection).checking, false, 'no check started after the cancel');
    } finally {
      own.close();
      await quick.closeAll();
      await changing.close();
    }
  });

  it('starts afresh when the record changes (a new URL is a new server)', async () => {
    const connection = connectionTo(upstream.url, 'u0123abcd__moved');
    await health.check(connection);
    const moved = { ...connection, url: upstream.url.replace('/mcp', '/elsewhere') };
    assert.equal(health.health(moved).last, undefined);
    const measured = await health.check(moved);
    assert.equal(measured.kind === 'failed' && measured.problem, 'not-mcp');
    health.forget(moved);
  });
});
