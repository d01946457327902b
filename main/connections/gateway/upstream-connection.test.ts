import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture, type UpstreamMode } from '../../../e2e/fixtures/upstream-server.js';
import { waitFor } from '../../../test/support/wait.js';
import { UpstreamConnection, type UpstreamProgress } from './upstream-connection.js';
import { UpstreamUnavailableError } from './upstream-unavailable-error.js';

const KEY = { header: 'X-Api-Key', value: 'k-123' };

function connect(
  upstream: UpstreamFixture,
  options: {
    timeoutMs?: number;
    onToolsChanged?: () => void;
    onFailure?: (e: UpstreamUnavailableError) => void;
    key?: string;
    allowPrivateNetwork?: boolean;
  } = {},
) {
  return new UpstreamConnection(
    { name: 'u0123abcd__fixture', displayName: 'Fixture', url: upstream.url, transport: 'streamable-http' },
    {
      credentials: 'header',
      allowPrivateNetwork: options.allowPrivateNetwork ?? true,
      appPorts: () => [],
      headers: async () => ({ [KEY.header]: options.key ?? KEY.value }),
      timeoutMs: options.timeoutMs ?? 5_000,
      ...(options.onToolsChanged && { onToolsChanged: options.onToolsChanged }),
      ...(options.onFailure && { onFailure: options.onFailure }),
    },
  );
}

describe('UpstreamConnection', () => {
  let upstream: UpstreamFixture;
  before(async () => {
    upstream = await startUpstream({ apiKey: KEY });
  });
  after(() => upstream.close());

  it('lists the upstream tools with their schemas untouched, sending the credentials', async () => {
    const conn = connect(upstream);
    const tools = await conn.tools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'echo', 'fail', 'mixed_content', 'slow']);
    const add = tools.find((t) => t.name === 'add')!;
    assert.deepEqual(add.inputSchema.required, ['a', 'b']);
    assert.ok(add.outputSchema);
    assert.equal(tools.find((t) => t.name === 'echo')!.annotations?.readOnlyHint, true);
    assert.equal(upstream.requests.at(-1)?.['x-api-key'], KEY.value);
    await conn.close();
  });

  it('forwards every content type, isError and structured content as they are', async () => {
    const conn = connect(upstream);
    const mixed = await conn.call('mixed_content', {});
    assert.deepEqual(
      mixed.content.map((c) => (c as { type: string }).type),
      ['text', 'image', 'audio', 'resource_link', 'resource'],
    );
    const failed = await conn.call('fail', {});
    assert.equal(failed.isError, true);
    const sum = await conn.call('add', { a: 2, b: 3 });
    assert.deepEqual(sum.structuredContent, { sum: 5 });
    await conn.close();
  });

  it('relays progress and carries cancellation to the upstream', async () => {
    const conn = connect(upstream);
    const progress: UpstreamProgress[] = [];
    await conn.call('slow', { seconds: 0.3 }, { onProgress: (p) => progress.push(p) });
    assert.ok(progress.length >= 2);
    assert.equal(progress.at(-1)?.message, 'step 3');

    const controller = new AbortController();
    const started = upstream.calls.get('slow') ?? 0;
    const cancelled = upstream.cancelled.length;
    const call = conn.call('slow', { seconds: 30 }, { signal: controller.signal });
    // Cancelled once the upstream tool runs: earlier, there would be nothing upstream to cancel.
    await waitFor(() => (upstream.calls.get('slow') ?? 0) > started, 10_000, 'the upstream tool to start');
    controller.abort();
    await assert.rejects(call, (e: unknown) => !(e instanceof UpstreamUnavailableError), 'a cancellation is not reported as an outage');
    await waitFor(() => upstream.cancelled.slice(cancelled).includes('slow'), 10_000, 'the upstream tool to see the cancellation');
    await conn.close();
  });

  it('refuses to reach a loopback server unless private network targets are allowed (SSRF guard)', async () => {
    const before = upstream.requests.length;
    const conn = connect(upstream, { allowPrivateNetwork: false });
    await assert.rejects(
      conn.tools(),
      (e: unknown) =>
        e instanceof UpstreamUnavailableError &&
        /"Fixture".*(https|loopback)/.test(e.message) &&
        /WORKSPACE_ALLOW_PRIVATE_NETWORK=1/.test(e.message),
    );
    assert.equal(upstream.requests.length, before, 'no request reached the server');
    await conn.close();
  });

  it('names the connection and the cause when the upstream refuses the key', async () => {
    const conn = connect(upstream, { key: 'wrong' });
    await assert.rejects(
      conn.tools(),
      (e: unknown) =>
        e instanceof UpstreamUnavailableError &&
        e.problem === 'key-refused' &&
        /^The connection "Fixture" is unavailable: .*refused the API key \(HTTP 401\)/.test(e.message) &&
        !e.message.includes('u0123abcd__'),
    );
    await conn.close();
  });

  for (const [mode, message] of [
    ['http-500', /HTTP 500/],
    ['garbage', /not valid MCP|JSON/],
    ['hang', /did not answer within 1 s/],
  ] as const) {
    it(`fails with a clear error when the upstream ${mode === 'hang' ? 'is too slow' : `returns ${mode}`}, and recovers after`, async () => {
      const conn = connect(upstream, { timeoutMs: 1_000 });
      await conn.tools();
      upstream.setMode(mode);
      try {
        await assert.rejects(
          conn.call('echo', { text: 'x' }),
          (e: unknown) => e instanceof UpstreamUnavailableError && message.test(e.message),
        );
      } finally {
        upstream.setMode('ok');
      }
      const again = await conn.call('echo', { text: 'back' });
      assert.deepEqual(again.content, [{ type: 'text', text: 'echo: back' }]);
      await conn.close();
    });
  }

  it('reconnects after the upstream was killed and restarted', async () => {
    const conn = connect(upstream);
    await conn.call('echo', { text: 'before' });
    await upstream.kill();
    await assert.rejects(
      conn.call('echo', { text: 'down' }),
      (e: unknown) => e instanceof UpstreamUnavailableError && /refused|fetch failed|unavailable/.test(e.message),
    );
    await upstream.start();
    const after = await conn.call('echo', { text: 'after' });
    assert.deepEqual(after.content, [{ type: 'text', text: 'echo: after' }]);
    await conn.close();
  });

  it('retries once, on a new session, when the upstream forgot the old one', async () => {
    const conn = connect(upstream);
    await conn.call('echo', { text: 'one' });
    await upstream.forgetSessions();
    const result = await conn.call('echo', { text: 'two' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo: two' }]);
    await conn.close();
  });

  it('measures a fresh session and tools/list on check(), and reports each failure of the link once', async () => {
    const failures: UpstreamUnavailableError[] = [];
    const conn = connect(upstream, { timeoutMs: 1_000, onFailure: (e) => failures.push(e) });
    await conn.tools();
    const initializes = () => upstream.requests.filter((r) => r['mcp-session-id'] === undefined).length;
    const before = initializes();
    assert.equal((await conn.check()).length, 5);
    assert.equal(initializes(), before + 1, 'check() opened a new session');
    upstream.setMode('garbage');
    try {
      await assert.rejects(conn.check(), (e: unknown) => e instanceof UpstreamUnavailableError && e.problem === 'not-mcp');
    } finally {
      upstream.setMode('ok');
    }
    assert.deepEqual(
      failures.map((f) => f.problem),
      ['not-mcp'],
    );
    await conn.close();
  });

  it('refetches its tools when the upstream says they changed', async () => {
    let changed = 0;
    const conn = connect(upstream, { onToolsChanged: () => (changed += 1) });
    assert.equal((await conn.tools()).length, 5);
    upstream.addTool('fresh_tool');
    await waitFor(() => changed > 0, 10_000, 'the tools to be told changed');
    assert.ok((await conn.tools()).some((t) => t.name === 'fresh_tool'));
    await conn.close();
  });
});

describe('UpstreamConnection diagnosis: each failure is sorted into what a person does about it', () => {
  let open: UpstreamFixture;
  before(async () => {
    open = await startUpstream({ name: 'open' });
  });
  after(() => open.close());

  function plain(url: string, credentials: 'none' | 'header' = 'none') {
    return new UpstreamConnection(
      { name: 'u0123abcd__open', displayName: 'Open', url, transport: 'streamable-http' },
      { credentials, allowPrivateNetwork: true, appPorts: () => [], headers: async () => ({}), timeoutMs: 800 },
    );
  }

  async function problemOf(
    conn: UpstreamConnection,
    action: (c: UpstreamConnection) => Promise<unknown> = (c) => c.check(),
  ): Promise<[string, string]> {
    try {
      await action(conn);
    } catch (error) {
      assert.ok(error instanceof UpstreamUnavailableError, String(error));
      return [error.problem, error.message];
    } finally {
      await conn.close();
    }
    assert.fail('it worked');
  }

  const cases: Array<[string, UpstreamMode, string, RegExp]> = [
    ['a server that starts asking for OAuth (401 + WWW-Authenticate)', 'sign-in', 'sign-in', /asks for a sign-in/],
    ['a server that wants a token after initialize', 'sign-in-after-initialize', 'sign-in', /asks for a sign-in/],
    ['a server error', 'http-500', 'unreachable', /HTTP 500/],
    ['a hanging server', 'hang', 'unreachable', /did not answer within 1 s \(timeout\)/],
    ['garbage', 'garbage', 'not-mcp', /not valid MCP/],
  ];
  for (const [what, mode, problem, text] of cases) {
    it(`${what}: ${problem}`, async () => {
      open.setMode(mode);
      try {
        const [got, message] = await problemOf(plain(open.url));
        assert.equal(got, problem, message);
        assert.match(message, text);
      } finally {
        open.setMode('ok');
      }
    });
  }

  it('a server that crashes mid-stream during a call: unreachable', async () => {
    const conn = plain(open.url);
    await conn.tools();
    open.setMode('crash');
    try {
      const [problem, message] = await problemOf(conn, (c) => c.call('echo', { text: 'x' }));
      assert.equal(problem, 'unreachable', message);
    } finally {
      open.setMode('ok');
    }
  });

  it('a refused port, a name that does not resolve, a path that is not MCP', async () => {
    const down = await startUpstream();
    const url = down.url;
    await down.close();
    assert.deepEqual((await problemOf(plain(url)))[0], 'unreachable');
    assert.match((await problemOf(plain(url)))[1], /refused/);
    const [dns, dnsText] = await problemOf(plain('http://no-such-host.invalid/mcp'));
    assert.equal(dns, 'unreachable');
    assert.match(dnsText, /resolve/);
    const [notMcp, notMcpText] = await problemOf(plain(open.url.replace('/mcp', '/elsewhere')));
    assert.equal(notMcp, 'not-mcp', notMcpText);
  });

  it('a 401 without an OAuth challenge to a connection sending a key: key-refused', async () => {
    const locked = await startUpstream({ apiKey: { header: 'X-Api-Key', value: 'right' } });
    const [problem, message] = await problemOf(plain(locked.url, 'header'));
    assert.equal(problem, 'key-refused', message);
    await locked.close();
  });
});
