import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture } from '../../../e2e/fixtures/upstream-server.js';
import { UpstreamConnection, UpstreamUnavailableError, type UpstreamProgress } from './upstream-connection.js';

const KEY = { header: 'X-Api-Key', value: 'k-123' };

function connect(upstream: UpstreamFixture, options: { timeoutMs?: number; onToolsChanged?: () => void; key?: string; allowPrivateNetwork?: boolean } = {}) {
  return new UpstreamConnection(
    { name: 'u0123abcd__fixture', displayName: 'Fixture', url: upstream.url, transport: 'streamable-http' },
    { allowPrivateNetwork: options.allowPrivateNetwork ?? true, headers: async () => ({ [KEY.header]: options.key ?? KEY.value }), timeoutMs: options.timeoutMs ?? 5_000, ...(options.onToolsChanged && { onToolsChanged: options.onToolsChanged }) },
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
    assert.deepEqual(mixed.content.map((c) => (c as { type: string }).type), ['text', 'image', 'audio', 'resource_link', 'resource']);
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
    const call = conn.call('slow', { seconds: 30 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await assert.rejects(call, (e: unknown) => !(e instanceof UpstreamUnavailableError), 'a cancellation is not reported as an outage');
    const deadline = Date.now() + 5_000;
    while (!upstream.cancelled.includes('slow') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(upstream.cancelled.includes('slow'), 'the upstream tool saw the cancellation');
    await conn.close();
  });

  it('refuses to reach a loopback server unless private network targets are allowed (SSRF guard)', async () => {
    const before = upstream.requests.length;
    const conn = connect(upstream, { allowPrivateNetwork: false });
    await assert.rejects(conn.tools(), (e: unknown) => e instanceof UpstreamUnavailableError && /"Fixture".*(https|loopback)/.test(e.message) && /WORKSPACE_ALLOW_PRIVATE_NETWORK=1/.test(e.message));
    assert.equal(upstream.requests.length, before, 'no request reached the server');
    await conn.close();
  });

  it('names the connection and the cause when the upstream refuses the key', async () => {
    const conn = connect(upstream, { key: 'wrong' });
    await assert.rejects(conn.tools(), (e: unknown) => e instanceof UpstreamUnavailableError && /"Fixture" \(u0123abcd__fixture\).*refused the credentials \(HTTP 401\)/.test(e.message));
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
        await assert.rejects(conn.call('echo', { text: 'x' }), (e: unknown) => e instanceof UpstreamUnavailableError && message.test(e.message));
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
    await assert.rejects(conn.call('echo', { text: 'down' }), (e: unknown) => e instanceof UpstreamUnavailableError && /refused|fetch failed|unavailable/.test(e.message));
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

  it('refetches its tools when the upstream says they changed', async () => {
    let changed = 0;
    const conn = connect(upstream, { onToolsChanged: () => (changed += 1) });
    assert.equal((await conn.tools()).length, 5);
    upstream.addTool('fresh_tool');
    const deadline = Date.now() + 5_000;
    while (changed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(changed > 0);
    assert.ok((await conn.tools()).some((t) => t.name === 'fresh_tool'));
    await conn.close();
  });
});
