/**
 * The startup benchmark's baseline: a bare MCP SDK server with one tool, written as the SDK's own
 * examples write one (McpServer + StreamableHTTPServerTransport per session, createMcpExpressApp),
 * run with plain `node` like our CLI: `npm run bench:startup` compiles this file (types stripped,
 * imports left as they are, so the SDK loads from node_modules as in any app that uses it) and, for
 * the second reference, bundles it the way our CLI is bundled.
 *
 * Prints `baseline listening on <url>` once it listens.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const transports = new Map<string, StreamableHTTPServerTransport>();
const app = createMcpExpressApp({ host: '127.0.0.1' });
app.all('/mcp', (req, res) => {
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
    const server = new McpServer({ name: 'startup-baseline', version: '1.0.0' });
    server.registerTool('fixed', { description: 'Returns a fixed short text.' }, () => ({ content: [{ type: 'text', text: 'hello' }] }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (sid) => void transports.set(sid, transport),
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
  run().catch((error: unknown) => {
    process.stderr.write(`baseline: ${(error as Error).stack ?? String(error)}\n`);
    if (!res.headersSent) res.status(500).end();
  });
});
const listener = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`baseline listening on http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp\n`);
});
