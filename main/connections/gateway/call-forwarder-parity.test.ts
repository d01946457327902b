import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startUpstream, type UpstreamFixture, type UpstreamMode } from '../../../e2e/fixtures/upstream-server.js';
import { sseData } from '../../../test/support/sse.js';
import { CallForwarder, type UpstreamProgress } from './call-forwarder.js';
import { postWithFetch } from './upstream-post.js';

// CallForwarder sends tools/call on an upstream session without the SDK client's transport, copying
// its rules for the request and for reading the answer. The same calls go here through the SDK's
// Client and through the forwarder, on the same upstream session, and what each gives back (the
// result, the progress, or the error: its kind, code and message) must agree: an SDK update that
// changes a rule fails here. Where they differ on purpose, the case names what and why.

const KEY = { header: 'X-Api-Key', value: 'k-parity' };
const HEADERS = { [KEY.header]: KEY.value };

/**
 * Turns the fixture's answers to POSTs into plain JSON answers, as a server with JSON responses
 * sends them: the responses alone (such a server sends no progress), with the answer's headers.
 */
const asJsonAnswers: FetchLike = async (url, init) => {
  const response = await fetch(url, init);
  if (init?.method !== 'POST' || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const messages = sseData(await response.text())
    .map((data) => JSON.parse(data) as Record<string, unknown>)
    .filter((message) => 'id' in message && !('method' in message));
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(messages.length === 1 ? messages[0] : messages), { status: 200, headers });
};

/** What a call gave back, as compared. */
type Outcome =
  | { result: unknown; progress: UpstreamProgress[] }
  | { error: 'json-rpc'; code: number; message: string; data: unknown }
  | { error: 'http'; status: number | undefined; message?: string }
  | { error: 'other'; name: string; message: string };

function outcomeOf(error: unknown): Outcome {
  if (error instanceof McpError) return { error: 'json-rpc', code: error.code, message: error.message, data: error.data };
  if (error instanceof StreamableHTTPError) return { error: 'http', status: error.code, message: error.message };
  return { error: 'other', name: (error as Error).name, message: (error as Error).message };
}

interface Sides {
  client: Client;
  transport: StreamableHTTPClientTransport;
  forwarder: CallForwarder;
}

/** An SDK client session on the upstream, and a forwarder on that same session. */
async function open(upstream: UpstreamFixture, fetchFn: FetchLike = fetch): Promise<Sides> {
  const url = new URL(upstream.url);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: HEADERS }, fetch: fetchFn });
  const client = new Client({ name: 'parity', version: '1.0.0' });
  await client.connect(transport);
  const forwarder = new CallForwarder({ post: postWithFetch(url, fetchFn), headers: HEADERS, transport, timeoutMs: 5_000 });
  return { client, transport, forwarder };
}

async function throughSdk(sides: Sides, tool: string, args: Record<string, unknown> | undefined, progress: boolean): Promise<Outcome> {
  const seen: UpstreamProgress[] = [];
  try {
    const result = await sides.client.callTool(
      { name: tool, ...(args && { arguments: args }) },
      undefined,
      progress ? { onprogress: (p) => seen.push({ progress: p.progress, total: p.total, message: p.message }) } : {},
    );
    return { result, progress: seen };
  } catch (error) {
    return outcomeOf(error);
  }
}

async function throughForwarder(
  sides: Sides,
  tool: string,
  args: Record<string, unknown> | undefined,
  progress: boolean,
): Promise<Outcome> {
  const seen: UpstreamProgress[] = [];
  try {
    const result = await sides.forwarder.call(tool, args, progress ? { onProgress: (p) => seen.push(p) } : {});
    return { result, progress: seen };
  } catch (error) {
    return outcomeOf(error);
  }
}

/** The outcome as plain JSON (a field left undefined is a field left out), less what differs on purpose. */
function same(outcome: Outcome, differs: readonly string[]): unknown {
  const plain = JSON.parse(JSON.stringify(outcome)) as Record<string, unknown>;
  if (differs.includes('http-message') && plain.error === 'http') delete plain.message;
  return plain;
}

interface Case {
  name: string;
  tool: string;
  args?: Record<string, unknown>;
  progress?: boolean;
  /** Runs on the session before the call. */
  setUp?: (sides: Sides, upstream: UpstreamFixture) => Promise<void>;
  /** How the upstream answers the call (and nothing else). */
  mode?: UpstreamMode;
  differs?: string[];
}

/**
 * Why an outcome may differ:
 * - http-message: the SDK words an HTTP refusal as "Error POSTing to endpoint" with the body it
 *   read; the forwarder does not read a refusal's body (UpstreamConnection says what it means from
 *   the status and the challenge). The status is the same.
 */
const CASES: Case[] = [
  { name: 'a text result', tool: 'echo', args: { text: 'hello' } },
  { name: 'every content type', tool: 'mixed_content' },
  { name: 'structured content', tool: 'add', args: { a: 2, b: 3 } },
  { name: 'a tool error', tool: 'fail' },
  { name: 'a tool there is not', tool: 'no_such_tool', args: {} },
  { name: 'arguments the tool refuses', tool: 'echo', args: { text: 5 } },
  { name: 'no arguments where some are needed', tool: 'add' },
  { name: 'progress, then the result', tool: 'slow', args: { seconds: 0.3 }, progress: true },
  {
    name: 'a session the upstream ended',
    tool: 'echo',
    args: { text: 'late' },
    setUp: (_sides, upstream) => upstream.forgetSessions(),
    differs: ['http-message'],
  },
  { name: 'an answer that is not JSON', tool: 'echo', args: { text: 'x' }, mode: 'garbage' },
  { name: 'a server error', tool: 'echo', args: { text: 'x' }, mode: 'http-500', differs: ['http-message'] },
  {
    name: 'a protocol version the upstream does not take',
    tool: 'echo',
    args: { text: 'old' },
    setUp: async (sides) => sides.transport.setProtocolVersion('1999-01-01'),
    differs: ['http-message'],
  },
];

for (const answers of ['event streams', 'JSON'] as const) {
  describe(`the forwarder and the SDK client give back the same, upstream answering with ${answers}`, () => {
    let upstream: UpstreamFixture;
    before(async () => {
      upstream = await startUpstream({ apiKey: KEY });
    });
    after(() => upstream.close());

    for (const c of CASES) {
      const why = c.differs?.length ? ` (on purpose: ${c.differs.join(', ')})` : '';
      it(`${c.name}${why}`, async () => {
        // A session each, set up alike: a call changes nothing the other one sees.
        const sdk = await open(upstream, answers === 'JSON' ? asJsonAnswers : fetch);
        const ours = await open(upstream, answers === 'JSON' ? asJsonAnswers : fetch);
        try {
          await c.setUp?.(sdk, upstream);
          upstream.setMode(c.mode ?? 'ok');
          const a = await throughSdk(sdk, c.tool, c.args, c.progress ?? false);
          upstream.setMode('ok');
          await c.setUp?.(ours, upstream);
          upstream.setMode(c.mode ?? 'ok');
          const b = await throughForwarder(ours, c.tool, c.args, c.progress ?? false);
          upstream.setMode('ok');
          assert.deepEqual(same(b, c.differs ?? []), same(a, c.differs ?? []));
        } finally {
          await Promise.all([sdk.client.close(), ours.client.close()]);
        }
      });
    }
  });
}
