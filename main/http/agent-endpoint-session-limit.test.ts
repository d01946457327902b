import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { raw, type RawResponse } from '../../test/support/raw-http.js';

// One token may hold 64 sessions: a client that opens more loses its least recently used idle ones.

const LIMIT = 64;
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});
const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

describe('MCP sessions per token', () => {
  let fx: HostFixture;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-session-limit-'));
    fx = await startHost();
  });
  after(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function open(token: string): Promise<string> {
    const response = await raw(fx.url, { headers: { Authorization: `Bearer ${token}` }, body: initialize });
    assert.equal(response.status, 200, response.body);
    return response.headers['mcp-session-id'] as string;
  }

  function send(token: string, session: string, body: string): Promise<RawResponse> {
    return raw(fx.url, {
      headers: { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': session, 'Mcp-Protocol-Version': '2025-06-18' },
      body,
    });
  }

  it('closes the least recently used idle session of a token that opens one more than 64, and no other', async () => {
    const [mine, other] = [await fx.token('many'), await fx.token('other')];
    const otherSession = await open(other);

    // The oldest session has a call in progress while the rest are opened: it is not idle.
    const busy = await open(mine);
    const marker = join(dir, 'started');
    const call = send(
      mine,
      busy,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'bash', arguments: { command: `touch ${marker}; sleep 2; echo finished` } },
      }),
    );
    await waitFor(
      () =>
        stat(marker).then(
          () => true,
          () => false,
        ),
      10_000,
      'the busy call to start',
    );

    const sessions = [busy];
    while (sessions.length < LIMIT) sessions.push(await open(mine));
    // Used just now: the second oldest is no longer the least recently used.
    assert.equal((await send(mine, sessions[1]!, listTools)).status, 200);

    sessions.push(await open(mine));
    const gone = await send(mine, sessions[2]!, listTools);
    assert.equal(gone.status, 404);
    assert.match(gone.body, /Session not found/);
    for (const kept of [sessions[1]!, sessions[3]!, sessions.at(-1)!]) assert.equal((await send(mine, kept, listTools)).status, 200);
    assert.match((await call).body, /finished/);
    assert.equal((await send(mine, busy, listTools)).status, 200);

    // Each further one closes the next least recently used; the other token keeps its session.
    for (let i = 0; i < 5; i++) sessions.push(await open(mine));
    const statuses = await Promise.all(sessions.map(async (s) => (await send(mine, s, listTools)).status));
    assert.equal(statuses.filter((s) => s === 200).length, LIMIT);
    assert.deepEqual(statuses.slice(2, 9), [404, 200, 404, 404, 404, 404, 404]);
    assert.equal((await send(other, otherSession, listTools)).status, 200);
  });
});
