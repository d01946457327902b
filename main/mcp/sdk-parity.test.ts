import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { sseData } from '../../test/support/sse.js';
import { CommandRunner } from '../machine/command-runner.js';
import { machineTools } from './machine-tools.js';
import { Changes } from './resource-subscriptions.js';
import { createWorkspaceServer } from './workspace-server.js';

// The agent endpoint answers some requests without the SDK's Streamable HTTP transport: tools/call
// (DirectToolCalls), and what comes before a session (the body, the session id: agent-endpoint.ts
// and sessions.ts). Those copy the SDK's rules. The same requests go here to the real endpoint and
// to the SDK's transport alone, serving the same tools, and the answers must agree: an SDK update
// that changes a rule fails here. Where they differ on purpose, the case names what and why.

/** What an answer is compared on: status, the headers that matter, and its JSON-RPC messages. */
interface Answer {
  status: number;
  contentType: string | undefined;
  /** Whether the answer names the session (Mcp-Session-Id) it was given in. */
  namesSession: boolean;
  /** An event stream's headers for the proxies between (caching, buffering). */
  streamHeaders?: Record<string, unknown>;
  messages: unknown[];
}

interface Endpoint {
  url: string;
  session: string;
  version: string;
}

type Differs = 'format' | 'message' | 'invalid-params';

/**
 * Why an answer may differ, by what differs:
 * - format: DirectToolCalls answers a call with nothing to send before its result (and done within
 *   the SDK's keep-alive interval, 15 s) as one JSON body, where the SDK's transport always opens an
 *   event stream; the Streamable HTTP spec allows either, and JSON saves the stream's cost on every
 *   call. The messages are the same. (A longer call streams with keep-alive comments, as the SDK's
 *   does: direct-tool-calls.test.ts.)
 * - message: the endpoint's own error text says what to do next (start a new session, fix the JSON
 *   at the place named); the status and the JSON-RPC code are the SDK's.
 * - invalid-params: a tools/call whose params are not a call (no name, arguments not an object) is
 *   answered -32602 Invalid params, "Invalid tools/call request: <the schema's issues>", as the SDK
 *   Server's own tools/call check words it and JSON-RPC defines the code. That check never runs in
 *   the SDK: its Protocol parses the request with the same schema first and answers -32603 Internal
 *   error with the bare issues. The issues are the same; an SDK that changes either answer fails here.
 */
const DIFFERENCES: Record<Differs, string> = {
  format: 'one JSON body where the SDK streams',
  message: 'an error message that says what to do',
  'invalid-params': '-32602 Invalid params where the SDK says -32603',
};

let fx: HostFixture;
let sdk: { url: string; close(): Promise<void> };
let dir: string;
let ours: Endpoint;
let theirs: Endpoint;

/**
 * The SDK's transport alone, as its own examples serve it: one StreamableHTTPServerTransport per
 * session, each with an MCP server of the product's making (the machine's tools, the same tool
 * table). A request without a session id that is not an initialize, or with an id no session has,
 * goes to the open session's transport, so that the transport itself answers it.
 */
async function sdkTransportServer(skillsDir: string): Promise<{ url: string; close(): Promise<void> }> {
  const commands = new CommandRunner({ maxTimeoutSeconds: 30, maxSavedTotalBytes: 2 ** 20 });
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const open = async (): Promise<StreamableHTTPServerTransport> => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    const server = createWorkspaceServer({
      instructions: '',
      skillsDir,
      skillsChanged: new Changes(),
      tools: machineTools({ skillsDir, commands }),
      sources: [],
      run: (_tool, _extra, fn) => fn(),
      toolSearch: async () => false,
    });
    await server.connect(transport);
    return transport;
  };
  const route = async (req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> => {
    const id = req.headers['mcp-session-id'];
    const any = (): StreamableHTTPServerTransport => [...transports.values()][0]!;
    if (typeof id === 'string') return (transports.get(id) ?? any()).handleRequest(req, res);
    const body = JSON.parse(await textOf(req)) as unknown;
    return (isInitializeRequest(body) ? await open() : any()).handleRequest(req, res, body);
  };
  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => res.destroy());
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      await Promise.all([...transports.values()].map((t) => t.close()));
      server.closeAllConnections();
      server.close();
      await commands.killAll();
    },
  };
}

async function textOf(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

/** One request with exactly these headers (none added), and its answer whole. */
function exchange(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function initialize(url: string): Promise<Endpoint> {
  const answer = await exchange(
    url,
    BASE_HEADERS,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'parity', version: '1' } },
    }),
  );
  assert.equal(answer.status, 200, answer.body);
  const session = answer.headers['mcp-session-id'] as string;
  const endpoint = { url, session, version: LATEST_PROTOCOL_VERSION };
  const initialized = await send(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(initialized.status, 202);
  return endpoint;
}

/**
 * Sends `body` (JSON, or text as it is) on the session, with the usual headers changed by
 * `changes` (undefined: the header is left out).
 */
async function send(endpoint: Endpoint, body: unknown, changes: Record<string, string | undefined> = {}): Promise<Answer> {
  const all: Record<string, string | undefined> = {
    ...BASE_HEADERS,
    'mcp-session-id': endpoint.session,
    'mcp-protocol-version': endpoint.version,
    ...changes,
  };
  const headers = Object.fromEntries(Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const answer = await exchange(endpoint.url, headers, typeof body === 'string' ? body : JSON.stringify(body));
  const contentType = answer.headers['content-type'] as string | undefined;
  const messages =
    answer.body === ''
      ? []
      : contentType === 'text/event-stream'
        ? sseData(answer.body).map((data) => JSON.parse(data) as unknown)
        : [JSON.parse(answer.body) as unknown].flat();
  const streamHeaders =
    contentType === 'text/event-stream'
      ? { 'cache-control': answer.headers['cache-control'], 'x-accel-buffering': answer.headers['x-accel-buffering'] }
      : undefined;
  return {
    status: answer.status,
    contentType,
    namesSession: answer.headers['mcp-session-id'] === endpoint.session,
    ...(streamHeaders && { streamHeaders }),
    messages,
  };
}

type Message = { id?: unknown; error?: { code: number; message: string } };

/** The answer with what may differ for `differs` taken out, and what never matters made alike. */
function comparable(answer: Answer, differs: readonly Differs[], side: 'ours' | 'sdk'): unknown {
  let messages = (answer.messages as Message[]).map((message) => {
    if (!message.error) return message;
    if (differs.includes('message')) return { ...message, error: { ...message.error, message: '(own words)' } };
    if (differs.includes('invalid-params') && side === 'ours') return { ...message, error: invalidParamsAsSdk(message.error) };
    return message;
  });
  // A batch's answers come as each call ends, in no set order.
  if (messages.length > 1) messages = messages.sort((a, b) => String(a.id).localeCompare(String(b.id)));
  // The media type matters, not its parameters (a charset).
  const contentType = answer.contentType?.split(';')[0]!.trim();
  if (!differs.includes('format')) return { ...answer, contentType, messages };
  // The messages are the same; ours came as one JSON body (DirectToolCalls answered), the SDK's as a stream.
  assert.equal(contentType, side === 'ours' ? 'application/json' : 'text/event-stream');
  return { status: answer.status, messages };
}

/** Our -32602 answer to params that are not a call, as the SDK's Protocol words it (see DIFFERENCES). */
function invalidParamsAsSdk(error: { code: number; message: string }): { code: number; message: string } {
  const prefix = 'MCP error -32602: Invalid tools/call request: ';
  assert.equal(error.code, -32602);
  assert.ok(error.message.startsWith(prefix), error.message);
  return { code: -32603, message: error.message.slice(prefix.length) };
}

interface Case {
  name: string;
  body: unknown;
  headers?: Record<string, string | undefined>;
  differs?: Differs[];
}

const call = (id: unknown, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const notes = () => join(dir, 'notes.txt');

const CASES: Case[] = [
  { name: 'a call', body: () => call(1, 'read', { path: notes() }), differs: ['format'] },
  { name: 'a call with a string id', body: () => call('s-2', 'read', { path: notes(), offset: 2 }), differs: ['format'] },
  { name: 'a call to a tool there is not', body: () => call(3, 'no_such_tool', {}), differs: ['format'] },
  { name: 'arguments that are not an object', body: () => call(4, 'read', 'notes.txt'), differs: ['format', 'invalid-params'] },
  { name: 'arguments the tool refuses', body: () => call(5, 'read', { path: 5 }), differs: ['format'] },
  {
    name: 'a call without a tool name',
    body: () => ({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: {} }),
    differs: ['format', 'invalid-params'],
  },
  { name: 'a call without params', body: () => ({ jsonrpc: '2.0', id: 7, method: 'tools/call' }) },
  { name: 'a call with id null', body: () => call(null, 'read', { path: notes() }) },
  { name: 'a call with a fractional id', body: () => call(1.5, 'read', { path: notes() }) },
  {
    name: 'a call without "jsonrpc"',
    body: () => ({ id: 8, method: 'tools/call', params: { name: 'read', arguments: { path: notes() } } }),
  },
  {
    name: 'a call in a task',
    body: () => ({
      jsonrpc: '2.0',
      id: 9,
      method: 'tools/call',
      params: { name: 'read', arguments: { path: notes() }, task: { ttl: 1000 } },
    }),
  },
  { name: 'a body that is not JSON', body: '{"jsonrpc": "2.0", "id": 10, "method": "tools/ca', differs: ['message'] },
  { name: 'a batch of calls', body: () => [call(11, 'read', { path: notes() }), call(12, 'no_such_tool', {})] },
  { name: 'an empty batch', body: () => [] },
  { name: 'a cancellation of no call', body: () => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }) },
  {
    name: 'no session id',
    body: () => call(13, 'read', { path: notes() }),
    headers: { 'mcp-session-id': undefined },
    differs: ['message'],
  },
  {
    name: 'a session id no session has',
    body: () => call(14, 'read', { path: notes() }),
    headers: { 'mcp-session-id': 'not-a-session' },
    differs: ['message'],
  },
  {
    name: 'an unsupported protocol version',
    body: () => call(15, 'read', { path: notes() }),
    headers: { 'mcp-protocol-version': '1999-01-01' },
  },
  {
    name: 'no protocol version header',
    body: () => call(16, 'read', { path: notes() }),
    headers: { 'mcp-protocol-version': undefined },
    differs: ['format'],
  },
  { name: 'Accept without event streams', body: () => call(17, 'read', { path: notes() }), headers: { accept: 'application/json' } },
  { name: 'Accept without JSON', body: () => call(18, 'read', { path: notes() }), headers: { accept: 'text/event-stream' } },
  {
    name: 'a JSON Content-Type with a charset',
    body: () => call(19, 'read', { path: notes() }),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    differs: ['format'],
  },
  {
    name: 'a JSON Content-Type in capitals',
    body: () => call(20, 'read', { path: notes() }),
    headers: { 'content-type': 'Application/JSON' },
    differs: ['format'],
  },
  {
    name: 'a JSON Content-Type with an empty parameter',
    body: () => call(21, 'read', { path: notes() }),
    headers: { 'content-type': 'application/json;' },
    differs: ['format'],
  },
  {
    name: 'a text Content-Type that names JSON in a parameter',
    body: () => call(22, 'read', { path: notes() }),
    headers: { 'content-type': 'text/plain; a=application/json' },
  },
  { name: 'no Content-Type', body: () => call(23, 'read', { path: notes() }), headers: { 'content-type': undefined } },
];

describe('the direct paths answer as the SDK transport does', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-parity-'));
    await writeFile(join(dir, 'notes.txt'), 'one\ntwo\nthree\n');
    fx = await startHost({ auth: false });
    sdk = await sdkTransportServer(dir);
    ours = await initialize(fx.url);
    theirs = await initialize(sdk.url);
  });
  after(async () => {
    await fx.close();
    await sdk.close();
    await rm(dir, { recursive: true, force: true });
  });
  it('streams progress before the result with the same headers and events', async () => {
    const body = {
      jsonrpc: '2.0',
      id: 'p-1',
      method: 'tools/call',
      params: { name: 'bash', arguments: { command: 'echo one; sleep 1.2; echo two' }, _meta: { progressToken: 'tick' } },
    };
    const [a, b] = await Promise.all([send(ours, body), send(theirs, body)]);
    // How many progress reports come depends on timing; what they are, and that the result ends the stream, does not.
    const shape = (answer: Answer) => ({
      ...answer,
      messages: (answer.messages as Array<{ id?: unknown; method?: string; params?: { progressToken?: unknown } }>)
        .map((m) => (m.method ? `${m.method} ${String(m.params?.progressToken)}` : `answer to ${String(m.id)}`))
        .filter((kind, i, all) => kind !== all[i - 1]),
    });
    assert.deepEqual(shape(a), shape(b));
    assert.deepEqual(shape(a).messages, ['notifications/progress tick', 'answer to p-1']);
  });

  for (const c of CASES) {
    it(`${c.name}${c.differs ? ` (on purpose: ${c.differs.map((d) => DIFFERENCES[d]).join('; ')})` : ''}`, async () => {
      const body = typeof c.body === 'function' ? (c.body as () => unknown)() : c.body;
      const [a, b] = await Promise.all([send(ours, body, c.headers), send(theirs, body, c.headers)]);
      assert.deepEqual(comparable(a, c.differs ?? [], 'ours'), comparable(b, c.differs ?? [], 'sdk'));
    });
  }
});
