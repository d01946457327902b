import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Agent } from 'undici';
import { startUpstream, type UpstreamFixture } from '../../../e2e/fixtures/upstream-server.js';
import { sseData } from '../../../test/support/sse.js';
import { waitFor } from '../../../test/support/wait.js';
import { CallForwarder, MAX_ANSWER_CHARS, UpstreamAnswerError, type UpstreamProgress } from './call-forwarder.js';
import { UpstreamConnection } from './upstream-connection.js';
import { postWithDispatcher, postWithFetch, type Post } from './upstream-post.js';

const KEY = { header: 'X-Api-Key', value: 'k-forward' };
const HEADERS = { [KEY.header]: KEY.value };

/** An SDK client session on the fixture, and a forwarder on that same session. */
async function openSession(upstream: UpstreamFixture, options: { post?: (url: URL) => Post; timeoutMs?: number } = {}) {
  const url = new URL(upstream.url);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: HEADERS } });
  const client = new Client({ name: 'forwarder-test', version: '1.0.0' });
  await client.connect(transport);
  const post = options.post?.(url) ?? postWithFetch(url, fetch);
  const forwarder = new CallForwarder({ post, headers: HEADERS, transport, timeoutMs: options.timeoutMs ?? 5_000 });
  return { client, forwarder };
}

/** The tools/call POSTs a fetch sent, by request body. */
function recording(base: FetchLike = fetch) {
  const calls: Array<{ method: string; id: unknown }> = [];
  const wrapped: FetchLike = async (url, init) => {
    if (typeof init?.body === 'string') {
      const message = JSON.parse(init.body) as { method?: string; id?: unknown };
      if (message.method) calls.push({ method: message.method, id: message.id });
    }
    return base(url, init);
  };
  return { calls, fetch: wrapped };
}

/** Turns the fixture's event-stream answers into plain JSON answers, as a server with JSON responses sends. */
const asJsonAnswers: FetchLike = async (url, init) => {
  const response = await fetch(url, init);
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const messages = sseData(await response.text()).map((data) => JSON.parse(data) as unknown);
  return new Response(JSON.stringify(messages.length === 1 ? messages[0] : messages), {
    status: 200,
    headers: { 'content-type': 'application/json' },
  });
};

describe('CallForwarder', () => {
  let upstream: UpstreamFixture;
  before(async () => {
    upstream = await startUpstream({ apiKey: KEY });
  });
  after(() => upstream.close());

  it("reads an event-stream answer: progress in order under the call's own token, then the result", async () => {
    const record = recording();
    const { client, forwarder } = await openSession(upstream, { post: (url) => postWithFetch(url, record.fetch) });
    const progress: UpstreamProgress[] = [];
    const result = await forwarder.call('slow', { seconds: 0.5 }, { onProgress: (p) => progress.push(p) });
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 0.5s' }]);
    assert.deepEqual(
      progress,
      [1, 2, 3, 4, 5].map((i) => ({ progress: i, total: 5, message: `step ${i}` })),
    );
    assert.equal(record.calls.length, 1);
    assert.equal(record.calls[0]!.method, 'tools/call');
    assert.equal(typeof record.calls[0]!.id, 'string', "its ids are strings, never one of the SDK client's numbers");
    await client.close();
  });

  it('reads the same answers straight on an undici dispatcher, reusing its sockets', async () => {
    const agent = new Agent();
    let sockets = 0;
    const { client, forwarder } = await openSession(upstream, { post: (url) => postWithDispatcher(url, agent, postWithFetch(url, fetch)) });
    agent.on('connect', () => (sockets += 1));
    const progress: UpstreamProgress[] = [];
    const slow = await forwarder.call('slow', { seconds: 0.3 }, { onProgress: (p) => progress.push(p) });
    assert.deepEqual(slow.content, [{ type: 'text', text: 'slept 0.3s' }]);
    assert.deepEqual(
      progress.map((p) => p.message),
      ['step 1', 'step 2', 'step 3'],
    );
    for (let i = 0; i < 20; i += 1) {
      assert.deepEqual((await forwarder.call('echo', { text: `n${i}` })).content, [{ type: 'text', text: `echo: n${i}` }]);
      // An error answer must free its socket too.
      if (i % 5 === 0) await assert.rejects(forwarder.call('echo', 'not an object' as unknown as Record<string, unknown>), McpError);
    }
    // The next call may go out while the last answer's end is still being read: a second socket, then no more.
    assert.ok(sockets <= 2, `${sockets} sockets for 25 calls`);
    await client.close();
    await agent.close();
  });

  it('restarts its timeout at each progress notification', async () => {
    const { client, forwarder } = await openSession(upstream, { timeoutMs: 400 });
    const result = await forwarder.call('slow', { seconds: 1 }, { onProgress: () => {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'slept 1s' }]);
    await client.close();
  });

  it('reads a JSON answer, every field as the upstream sent it', async () => {
    const { client, forwarder } = await openSession(upstream, { post: (url) => postWithFetch(url, asJsonAnswers) });
    assert.deepEqual(await forwarder.call('echo', { text: 'json' }), { content: [{ type: 'text', text: 'echo: json' }] });
    assert.deepEqual((await forwarder.call('add', { a: 1, b: 2 })).structuredContent, { sum: 3 });
    assert.equal((await forwarder.call('fail', {})).isError, true);
    await client.close();
  });

  it("reports the upstream's JSON-RPC error as the SDK client does", async () => {
    const { client, forwarder } = await openSession(upstream);
    // Arguments that are not an object fail the upstream's request validation: a JSON-RPC error, not a tool result.
    await assert.rejects(
      forwarder.call('echo', 'not an object' as unknown as Record<string, unknown>),
      (e: unknown) => e instanceof McpError && e.code < 0,
    );
    await client.close();
  });

  it("carries the caller's cancellation to the upstream tool (notifications/cancelled) and stops waiting", async () => {
    const { client, forwarder } = await openSession(upstream);
    upstream.cancelled.length = 0;
    const controller = new AbortController();
    const calls = upstream.calls.get('slow') ?? 0;
    const call = forwarder.call('slow', { seconds: 30 }, { signal: controller.signal });
    // Cancelled once the upstream tool runs: earlier, there would be nothing upstream to cancel.
    await waitFor(() => (upstream.calls.get('slow') ?? 0) > calls, 10_000, 'the upstream tool to start');
    const cancelledAt = Date.now();
    controller.abort(new Error('the agent cancelled'));
    await assert.rejects(call, /the agent cancelled/);
    assert.ok(Date.now() - cancelledAt < 5_000, 'the call stopped at once');
    await waitFor(() => upstream.cancelled.includes('slow'), 10_000, 'the upstream tool to see the cancellation');
    assert.deepEqual(upstream.cancelled, ['slow']);
    await client.close();
  });
});

describe('UpstreamConnection forwarding through its CallForwarder', () => {
  let upstream: UpstreamFixture;
  before(async () => {
    upstream = await startUpstream({ apiKey: KEY });
  });
  after(() => upstream.close());

  it('opens a new session once when the upstream answers 404 (session expired), and the call goes through', async () => {
    const conn = new UpstreamConnection(
      { name: 'u0123abcd__fixture', displayName: 'Fixture', url: upstream.url, transport: 'streamable-http' },
      { credentials: 'header', allowPrivateNetwork: true, appPorts: () => [], headers: async () => HEADERS, timeoutMs: 5_000 },
    );
    await conn.call('echo', { text: 'one' });
    const initializesBefore = upstream.requests.filter((r) => r['mcp-session-id'] === undefined).length;
    await upstream.forgetSessions();
    const result = await conn.call('echo', { text: 'two' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echo: two' }]);
    const initializes = upstream.requests.filter((r) => r['mcp-session-id'] === undefined).length - initializesBefore;
    assert.equal(initializes, 1, 'exactly one new initialize');
    assert.equal(upstream.calls.get('echo'), 2, 'the call that hit the expired session was not run twice');
    await conn.close();
  });
});

describe('postWithDispatcher', () => {
  it('sends a redirected request again through the fetch it was given', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/old') res.writeHead(307, { location: '/new' }).end();
      else req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"at":"new"}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/old`);
    const agent = new Agent();
    const answer = await postWithDispatcher(url, agent, postWithFetch(url, fetch))(
      { 'content-type': 'application/json' },
      '{}',
      new AbortController().signal,
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.contentType, 'application/json');
    assert.deepEqual(await answer.text.next(), { done: false, value: '{"at":"new"}' });
    await agent.close();
    server.close();
  });
});

/** A forwarder whose every call the given handler answers, on a plain HTTP server (no MCP session). */
async function rawUpstream(answer: (res: ServerResponse) => Promise<void>) {
  const closed: boolean[] = [];
  const server = createServer((req, res) => {
    res.on('close', () => closed.push(res.writableFinished));
    req.resume().on('end', () => void answer(res).catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const agent = new Agent();
  // Room for the 64 MiB answers on a loaded machine: their test is that they stop, not how fast.
  const session = { headers: {}, transport: new StreamableHTTPClientTransport(url), timeoutMs: 30_000 };
  return {
    /** Whether each answer was written whole (false: the forwarder stopped reading and dropped it). */
    closed,
    viaFetch: new CallForwarder({ ...session, post: postWithFetch(url, fetch) }),
    viaDispatcher: new CallForwarder({ ...session, post: postWithDispatcher(url, agent, postWithFetch(url, fetch)) }),
    async close() {
      await agent.close();
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('CallForwarder reading what an upstream sends', () => {
  it('reads an event stream in any chunks: CRLF and characters split in two, comments, events of other types, lines of one event', async () => {
    const result = JSON.stringify({ jsonrpc: '2.0', id: 'gw-1', result: { content: [{ type: 'text', text: 'split ✓' }] } });
    const at = result.indexOf(',"result"');
    const body = Buffer.from(
      `: keep-alive\r\nevent: other\r\ndata: not json\r\n\r\ndata: ${result.slice(0, at)}\ndata: ${result.slice(at)}\r\n\r\n`,
    );
    // Cut between CR and LF, between the result's two lines, and inside the three bytes of ✓.
    const cuts = [body.indexOf('\r\n') + 1, body.indexOf('\ndata: ,'), body.indexOf('✓') + 1, body.length];
    const upstream = await rawUpstream(async (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < cuts.length; i += 1) {
        res.write(body.subarray(cuts[i - 1] ?? 0, cuts[i]));
        await sleep(20);
      }
      res.end();
    });
    for (const forwarder of [upstream.viaFetch, upstream.viaDispatcher]) {
      // The two lines of the result's event join with a line break, which JSON reads as white space.
      assert.deepEqual(await forwarder.call('split', {}), { content: [{ type: 'text', text: 'split ✓' }] });
    }
    await upstream.close();
  });

  for (const [kind, start] of [
    ['event', (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: message\ndata: ')],
    [
      'JSON answer',
      (res: ServerResponse) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .write('{"jsonrpc":"2.0","id":"gw-1","result":{"content":[{"type":"text","text":"'),
    ],
  ] as const) {
    it(`stops reading an ${kind} larger than ${MAX_ANSWER_CHARS / 2 ** 20} MiB and drops the rest`, async () => {
      const upstream = await rawUpstream(async (res) => {
        start(res);
        // 1 MiB at a time, as fast as it is read, up to twice the limit (or until the reader drops it).
        const mib = 'x'.repeat(2 ** 20);
        for (let i = 0; i < (2 * MAX_ANSWER_CHARS) / 2 ** 20 && !res.destroyed; i += 1)
          await new Promise((resolve) => res.write(mib, resolve));
        res.end('"}]}}');
      });
      try {
        for (const forwarder of [upstream.viaFetch, upstream.viaDispatcher]) {
          await assert.rejects(
            forwarder.call('big', {}),
            (e: unknown) => e instanceof UpstreamAnswerError && /more than 64 MiB/.test(e.message),
          );
        }
        await waitFor(() => upstream.closed.length === 2, 30_000, 'both answers to be dropped');
        assert.deepEqual(upstream.closed, [false, false], 'neither answer was read to its end');
      } finally {
        await upstream.close();
      }
    });
  }
});
