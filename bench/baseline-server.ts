/**
 * The baseline: a bare MCP SDK server, as the SDK's own examples build one. Stateful Streamable
 * HTTP sessions (one McpServer + StreamableHTTPServerTransport per session, routed by
 * Mcp-Session-Id), the SDK's createMcpExpressApp (localhost Host-header check + express.json), and
 * one trivial tool that returns a fixed short text. No auth, no audit, no file access.
 *
 * Run as its own process (the bench spawns it); prints `baseline listening on <url>` on stdout.
 *   node --import tsx bench/baseline-server.ts [--tool KIND] [--auth] [--upstream URL]
 *
 * With no flags it is the bare baseline. The flags exist only for the cost breakdown: each adds
 * exactly one piece of ours to the bare server, loaded from main/ (nothing of main/ is loaded
 * without them):
 *   --tool text1k  the tool answers a fixed 1 KiB text (the size of the read answer)
 *   --tool read    the tool runs our read function (main/machine/read.ts) on `path` and answers as
 *                  our read tool does
 * and, to tell apart what our read function's cost is made of (none of these is ours):
 *   --tool fsread    fs.promises.readFile(path): the usual async read (4 thread-pool round trips)
 *   --tool readsync  fs.readFileSync(path): no thread pool at all
 *   --tool stat4     the fixed 1 KiB text after 4 awaited fs.promises.stat calls (as many thread-pool
 *                    round trips as our read of a small file: open, fstat, read, close)
 *   --auth         our JWT check (main/auth: JwtVerifier + the app's tokens in WORKSPACE_STATE_DIR)
 *                  in front of /mcp, with main/http/bearer-auth.ts
 * For the gateway benchmark, a minimal gateway: a tool `echo` ({ text }) that forwards the call to
 * the upstream MCP server at --upstream URL, sending `X-Api-Key: $BENCH_UPSTREAM_KEY`, through one
 * client shared by all sessions (as our gateway pools one per connection), and answers what it got:
 *   --tool proxy-sdk  forwarded with a plain SDK Client + StreamableHTTPClientTransport (global fetch)
 *   --tool proxy      forwarded through our gateway's pooled client for the bench's connection
 *                     (Gateway.upstream(connection).call, main/connections/gateway/), our services
 *                     opened on the host's state dir (WORKSPACE_STATE_DIR etc., as the host does)
 *   --tool proxy-raw  forwarded as a hand-made JSON-RPC POST over node:http with a keep-alive agent
 *                     (no fetch, no web streams, no schema check of the answer): what the outbound
 *                     hop costs with the least machinery
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile as fsReadFile, stat } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BASELINE_TEXT, BASELINE_TOOL, BENCH_PLACE, TEXT_1K } from './lib/shared.js';

const TOOL_KINDS = ['fixed', 'text1k', 'read', 'fsread', 'readsync', 'stat4', 'proxy', 'proxy-sdk', 'proxy-raw'] as const;
type ToolKind = (typeof TOOL_KINDS)[number];

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

type Handler = (args: { path?: string | undefined; text?: string | undefined }) => Promise<CallToolResult> | CallToolResult;

async function toolHandler(kind: ToolKind): Promise<Handler> {
  if (kind === 'fixed') return () => ({ content: [{ type: 'text', text: BASELINE_TEXT }] });
  if (kind === 'text1k') return () => ({ content: [{ type: 'text', text: TEXT_1K }] });
  if (kind === 'fsread') return async ({ path }) => ({ content: [{ type: 'text', text: await fsReadFile(path ?? '', 'utf8') }] });
  if (kind === 'readsync') return ({ path }) => ({ content: [{ type: 'text', text: readFileSync(path ?? '', 'utf8') }] });
  if (kind === 'stat4') {
    return async ({ path }) => {
      // As many thread-pool round trips as our read of a small file makes, and nothing else.
      for (let i = 0; i < 4; i++) await stat(path ?? '');
      return { content: [{ type: 'text', text: TEXT_1K }] };
    };
  }
  if (kind === 'proxy' || kind === 'proxy-sdk' || kind === 'proxy-raw') return proxyHandler(kind);
  const { readFile } = await import('../main/machine/read.js');
  return async ({ path }) => {
    const result = await readFile({ path: path ?? '' });
    if (result.kind !== 'text') throw new Error('expected a text file');
    const content: CallToolResult['content'] = [];
    if (result.text !== '') content.push({ type: 'text', text: result.text });
    if (result.note) content.push({ type: 'text', text: result.note });
    return { content };
  };
}

/** Forwards `echo` to the upstream, through one client made at startup and shared by all sessions. */
async function proxyHandler(kind: 'proxy' | 'proxy-sdk' | 'proxy-raw'): Promise<Handler> {
  const upstream = flag('--upstream');
  const key = process.env.BENCH_UPSTREAM_KEY;
  if (!upstream || !key) throw new Error('--tool proxy needs --upstream URL and BENCH_UPSTREAM_KEY');
  const headers = { 'X-Api-Key': key };
  if (kind === 'proxy-raw') return rawProxy(new URL(upstream), headers);
  if (kind === 'proxy-sdk') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'bench-proxy', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(upstream), { requestInit: { headers } }));
    return async ({ text }) => (await client.callTool({ name: 'echo', arguments: { text } })) as CallToolResult;
  }
  const { loadConfig } = await import('../main/config.js');
  const { openServices } = await import('../main/services.js');
  const { placeFromRoot } = await import('../main/places/place-root.js');
  const services = await openServices(loadConfig({ port: 0, controlPort: 0 }), (line) => process.stderr.write(`${line}\n`));
  const [connection] = await services.connections.usable(placeFromRoot(BENCH_PLACE));
  if (!connection) throw new Error(`no usable connection in ${BENCH_PLACE}`);
  const pooled = await services.gateway.upstream(connection);
  await pooled.tools(); // connect now, as our gateway has by the time an agent calls (it listed the tools)
  return async ({ text }) => (await pooled.call('echo', { text })) as CallToolResult;
}

/**
 * The least an outbound MCP hop can do: JSON-RPC over node:http with a keep-alive agent, the
 * session opened once, the answer's one SSE event (or JSON body) parsed with JSON.parse.
 */
async function rawProxy(url: URL, auth: Record<string, string>): Promise<Handler> {
  const agent = new http.Agent({ keepAlive: true });
  let sessionId: string | undefined;
  let nextId = 1;
  const post = (body: unknown): Promise<{ status: number; session: string | undefined; text: string }> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            ...auth,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Content-Length': Buffer.byteLength(payload),
            'Mcp-Protocol-Version': LATEST_PROTOCOL_VERSION,
            ...(sessionId && { 'Mcp-Session-Id': sessionId }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const session = res.headers['mcp-session-id'];
            resolve({
              status: res.statusCode ?? 0,
              session: typeof session === 'string' ? session : undefined,
              text: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const message = (text: string): { result?: unknown; error?: unknown } => {
    const data = text.startsWith('{')
      ? text
      : text
          .split('\n')
          .find((line) => line.startsWith('data: '))
          ?.slice(6);
    if (!data) throw new Error(`no JSON-RPC message in the upstream's answer: ${text.slice(0, 200)}`);
    return JSON.parse(data) as { result?: unknown; error?: unknown };
  };
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'bench-raw-proxy', version: '1.0.0' } },
  });
  if (init.status !== 200 || !init.session) throw new Error(`upstream initialize failed: HTTP ${init.status} ${init.text.slice(0, 200)}`);
  sessionId = init.session;
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return async ({ text }) => {
    const answer = message(
      (await post({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo', arguments: { text } } })).text,
    );
    if (!answer.result) throw new Error(`upstream error: ${JSON.stringify(answer.error)}`);
    return answer.result as CallToolResult;
  };
}

async function authMiddleware(): Promise<RequestHandler> {
  const { AgentTokenStore } = await import('../main/auth/agent-tokens.js');
  const { JwtVerifier } = await import('../main/auth/jwt-verifier.js');
  const { bearerAuth } = await import('../main/http/bearer-auth.js');
  const { stateDirFrom } = await import('../main/config.js');
  const verifier = await JwtVerifier.create({ appTokens: new AgentTokenStore({ stateDir: stateDirFrom() }) });
  const authenticate = bearerAuth(
    (req) => verifier.verifyAuthorization(req.headers.authorization),
    (error) => ({ status: 401, challenge: 'Bearer', message: (error as Error).message }),
  );
  return (req, res, next) => {
    void authenticate(req, res).then((caller) => caller && next(), next);
  };
}

async function main(): Promise<void> {
  const port = Number(flag('--port') ?? 0);
  const kind = (flag('--tool') ?? 'fixed') as ToolKind;
  if (!TOOL_KINDS.includes(kind)) throw new Error(`unknown --tool ${kind}`);
  const handler = await toolHandler(kind);
  const auth = process.argv.includes('--auth') ? await authMiddleware() : undefined;

  const createServer = (): McpServer => {
    const server = new McpServer({ name: 'bench-baseline', version: '1.0.0' });
    if (kind === 'fixed') {
      // The baseline proper: no input schema at all.
      server.registerTool(BASELINE_TOOL, { description: 'Returns a fixed short text.' }, () => handler({}));
    } else if (kind === 'proxy' || kind === 'proxy-sdk' || kind === 'proxy-raw') {
      server.registerTool('echo', { description: 'Forwarded to the upstream.', inputSchema: { text: z.string() } }, (args) =>
        handler(args),
      );
    } else {
      server.registerTool(BASELINE_TOOL, { description: 'Breakdown variant.', inputSchema: { path: z.string().optional() } }, (args) =>
        handler(args),
      );
    }
    return server;
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const app = createMcpExpressApp({ host: '127.0.0.1' });
  const handle: RequestHandler = (req: Request, res: Response) => {
    const run = async (): Promise<void> => {
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const transport = transports.get(id);
        if (!transport) {
          res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
          return;
        }
        await transport.handleRequest(req, res, req.body);
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null });
        return;
      }
      const server = createServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => {
          transports.set(sid, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
        void server.close();
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    };
    run().catch((error: unknown) => {
      process.stderr.write(`baseline: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) res.status(500).end();
    });
  };
  if (auth) app.all('/mcp', auth, handle);
  else app.all('/mcp', handle);

  const server = app.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  process.stdout.write(`baseline listening on ${url}\n`);

  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void Promise.all([...transports.values()].map((t) => t.close())).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`baseline: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
