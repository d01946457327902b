/**
 * The raw JSON-RPC floor (issue 28): a plain `node:http` server that answers the MCP client with
 * fixed bodies. No MCP SDK, no session state, no checks: `initialize` gets a fixed result and a
 * fixed session id, notifications 202, `tools/list` one tool, and every `tools/call` the same 1 KiB
 * text (the `read` benchmark's file), with only the request's id put in. What answering a call
 * costs a Node server at the least; `read` of ours is measured against it.
 *
 *   node --import tsx bench/floor-server.ts      # prints `floor listening on <url>`
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FLOOR_TOOL, TEXT_1K } from './lib/shared.js';

const SESSION = 'floor-session';
const JSON_HEADERS = { 'content-type': 'application/json', 'mcp-session-id': SESSION };
const INITIALIZED = {
  capabilities: { tools: {} },
  serverInfo: { name: 'floor', version: '1.0.0' },
};
const TOOLS = { tools: [{ name: FLOOR_TOOL, inputSchema: { type: 'object' } }] };
// The answer to every call, split where the request's id goes.
const [CALL_HEAD, CALL_TAIL] = JSON.stringify({ result: { content: [{ type: 'text', text: TEXT_1K }] }, jsonrpc: '2.0', id: 0 }).split(
  '"id":0',
) as [string, string];

const server = createServer({ keepAliveTimeout: 75_000 }, (req, res) => {
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const message = JSON.parse(Buffer.concat(chunks).toString()) as {
      id?: string | number;
      method: string;
      params?: { protocolVersion?: string };
    };
    if (message.id === undefined) return void res.writeHead(202).end();
    const id = JSON.stringify(message.id);
    let body: string;
    if (message.method === 'tools/call') body = `${CALL_HEAD}"id":${id}${CALL_TAIL}`;
    else if (message.method === 'initialize')
      body = JSON.stringify({
        jsonrpc: '2.0',
        id: message.id,
        result: { protocolVersion: message.params?.protocolVersion, ...INITIALIZED },
      });
    else if (message.method === 'tools/list') body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: TOOLS });
    else body = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} });
    res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp\n`);
});
