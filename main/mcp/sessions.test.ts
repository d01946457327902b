import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { raw, type RawResponse } from '../../test/support/raw-http.js';
import { waitFor } from '../../test/support/wait.js';
import { McpSessions } from './sessions.js';

// The limit's other side: when every session of a caller is busy, a new one is refused, not made
// by ending a call in progress. Real HTTP on loopback and real SDK servers; a limit of 2.

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

describe('McpSessions at its limit', () => {
  const gates = new Map<string, () => void>();
  let sessions: McpSessions<string>;
  let http: Server;
  let url: string;

  before(async () => {
    // A clock that stands still: every use falls in the same millisecond, as on a fast machine, and
    // the least recently used session must still be the one whose call ended first.
    sessions = new McpSessions<string>({
      now: () => 0,
      idleTimeoutMs: 60_000,
      maxSessionsPerOwner: 2,
      ownerOf: (caller) => caller,
      createServer: async () => {
        const server = new McpServer({ name: 'test', version: '1' });
        // Answers once the test opens its gate.
        server.registerTool('wait', { inputSchema: {} }, async (_args, extra) => {
          await new Promise<void>((resolve) => gates.set(String(extra.requestId), resolve));
          return { content: [{ type: 'text', text: 'done' }] };
        });
        return server;
      },
    });
    http = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      req.on('end', () => void sessions.handle(req, res, String(req.headers['x-caller']), text ? JSON.parse(text) : undefined));
    }).listen(0, '127.0.0.1');
    await once(http, 'listening');
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  after(async () => {
    await sessions.closeAll();
    http.close();
  });

  async function open(caller: string): Promise<RawResponse> {
    return raw(url, { headers: { 'X-Caller': caller }, body: initialize });
  }

  function send(caller: string, session: string, body: object): Promise<RawResponse> {
    return raw(url, {
      headers: { 'X-Caller': caller, 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-06-18' },
      body: JSON.stringify(body),
    });
  }

  const waitCall = (id: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: {} } });
  const ping = { jsonrpc: '2.0', id: 'ping', method: 'ping' };

  it('refuses a new session with 429 while every session has a call in progress, and makes room once one is idle', async () => {
    const first = (await open('alice')).headers['mcp-session-id'] as string;
    const second = (await open('alice')).headers['mcp-session-id'] as string;
    const calls = [send('alice', first, waitCall('a')), send('alice', second, waitCall('b'))];
    await waitFor(() => gates.has('a') && gates.has('b'), 10_000, 'both calls to start');

    const refused = await open('alice');
    assert.equal(refused.status, 429);
    assert.match(refused.body, /already has 2 open, each with a call in progress.*DELETE \/mcp/);
    assert.equal((await open('bob')).status, 200, "another caller is not limited by alice's sessions");

    // The second call ends first, so the second session is the least recently used idle one.
    gates.get('b')!();
    await calls[1];
    gates.get('a')!();
    await calls[0];
    assert.equal((await open('alice')).status, 200);
    assert.equal((await send('alice', second, ping)).status, 404);
    assert.equal((await send('alice', first, ping)).status, 200);
  });
});
