/**
 * The baseline: a bare MCP SDK server, as the SDK's own examples build one. Stateful Streamable
 * HTTP sessions (one McpServer + StreamableHTTPServerTransport per session, routed by
 * Mcp-Session-Id), the SDK's createMcpExpressApp (localhost Host-header check + express.json), and
 * one trivial tool that returns a fixed short text. No auth, no audit, no file access.
 *
 * Run as its own process (the bench spawns it); prints `baseline listening on <url>` on stdout.
 *   node --import tsx bench/baseline-server.ts [--tool KIND] [--auth]
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
 *   --tool alloc1m   the fixed 1 KiB text, plus a 1 MiB Buffer.allocUnsafe per call (our read's buffer)
 *   --tool stat6     the fixed 1 KiB text after 6 awaited fs.promises.stat calls (our read's round trips)
 *   --auth         our JWT check (main/auth: JwtVerifier + the app's tokens in WORKSPACE_STATE_DIR)
 *                  in front of /mcp, with main/http/bearer-auth.ts
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile as fsReadFile, stat } from 'node:fs/promises';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BASELINE_TEXT, BASELINE_TOOL, TEXT_1K } from './lib/shared.js';

const TOOL_KINDS = ['fixed', 'text1k', 'read', 'fsread', 'readsync', 'alloc1m', 'stat6'] as const;
type ToolKind = (typeof TOOL_KINDS)[number];

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

async function toolHandler(kind: ToolKind): Promise<(args: { path?: string | undefined }) => Promise<CallToolResult> | CallToolResult> {
  if (kind === 'fixed') return () => ({ content: [{ type: 'text', text: BASELINE_TEXT }] });
  if (kind === 'text1k') return () => ({ content: [{ type: 'text', text: TEXT_1K }] });
  if (kind === 'fsread') return async ({ path }) => ({ content: [{ type: 'text', text: await fsReadFile(path ?? '', 'utf8') }] });
  if (kind === 'readsync') return ({ path }) => ({ content: [{ type: 'text', text: readFileSync(path ?? '', 'utf8') }] });
  if (kind === 'alloc1m') {
    return () => {
      // What our read allocates per call, and nothing else.
      Buffer.allocUnsafe(1024 * 1024)[0] = 1;
      return { content: [{ type: 'text', text: TEXT_1K }] };
    };
  }
  if (kind === 'stat6') {
    return async ({ path }) => {
      // As many thread-pool round trips as our read of a small file makes, and nothing else.
      for (let i = 0; i < 6; i++) await stat(path ?? '');
      return { content: [{ type: 'text', text: TEXT_1K }] };
    };
  }
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

async function authMiddleware(): Promise<RequestHandler> {
  const { AgentTokenStore } = await import('../main/auth/agent-tokens.js');
  const { JwtVerifier } = await import('../main/auth/jwt-verifier.js');
  const { bearerAuth } = await import('../main/http/bearer-auth.js');
  const { stateDirFrom } = await import('../main/config.js');
  const verifier = await JwtVerifier.create({ appTokens: new AgentTokenStore({ stateDir: stateDirFrom() }) });
  return bearerAuth(
    (header) => verifier.verifyAuthorization(header),
    (error) => ({ status: 401, challenge: 'Bearer', message: (error as Error).message }),
  );
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
    } else {
      server.registerTool(BASELINE_TOOL, { description: 'Breakdown variant.', inputSchema: { path: z.string().optional() } }, (args) => handler(args));
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
