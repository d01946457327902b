import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { raw, type RawResponse } from '../../test/support/raw-http.js';

// What /mcp answers to requests it cannot take, before any session or tool sees them: its own
// request handling (Host check, path, body), not the SDK's.

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

function rpcError(response: RawResponse): { code: number; message: string } {
  return (JSON.parse(response.body) as { error: { code: number; message: string } }).error;
}

describe("the agent endpoint's own answers", () => {
  let fx: HostFixture;
  let headers: Record<string, string>;

  before(async () => {
    fx = await startHost({ auth: false });
    const { transport } = await fx.connect();
    headers = { 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': transport.protocolVersion! };
  });
  after(() => fx.close());

  it('answers a body that is not JSON with a JSON-RPC parse error (400, -32700)', async () => {
    const response = await raw(fx.url, { headers, body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/li' });
    assert.equal(response.status, 400);
    assert.equal(rpcError(response).code, -32700);
    assert.match(rpcError(response).message, /not valid JSON/);
  });

  it('refuses invalid UTF-8 and skips a byte order mark, whether the body is read whole or as it streams', async () => {
    const call = (path: Buffer) =>
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"'),
        path,
        Buffer.from('"}}}'),
      ]);
    const invalid = call(Buffer.from([0x78, 0xff]));
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), call(Buffer.from('/nonexistent-bom'))]);
    // Announced and small, a body is read whole; in chunks (no length), it goes through the streaming parser.
    const ways = (bytes: Buffer) => [
      { headers: { ...headers, 'Content-Length': String(bytes.length) }, body: [bytes] },
      { headers, body: [bytes.subarray(0, 10), bytes.subarray(10)] },
    ];
    for (const request of ways(invalid)) {
      const response = await raw(fx.url, request);
      assert.equal(response.status, 400, response.body);
      assert.equal(rpcError(response).code, -32700);
    }
    for (const request of ways(bom)) {
      const response = await raw(fx.url, request);
      assert.equal(response.status, 200, response.body);
      assert.match(response.body, /nonexistent-bom: no such file/);
    }
  });

  it('refuses a body larger than 64 MiB with 413, whether announced or streamed', async () => {
    const announced = await raw(fx.url, {
      headers: { ...headers, 'Content-Length': String(65 * 2 ** 20) },
      body: [Buffer.from('{"jsonrpc":')],
    });
    assert.equal(announced.status, 413);
    assert.match(rpcError(announced).message, /larger than the 64 MiB/);

    const chunk = Buffer.alloc(2 ** 20, 0x20);
    const streamed = await raw(fx.url, {
      headers,
      body: [Buffer.from('{"pad":"'), ...Array.from({ length: 65 }, () => chunk), Buffer.from('"}')],
    });
    assert.equal(streamed.status, 413);
    assert.match(rpcError(streamed).message, /larger than the 64 MiB this server accepts: send less at once/);
  });

  it('takes a large body whole, whether its length is announced or it comes in chunks', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pw-body-'));
    try {
      const content = 'x'.repeat(4 * 2 ** 20 - 1) + 'é';
      for (const [name, chunked] of [
        ['announced', false],
        ['chunked', true],
      ] as const) {
        const path = join(dir, name);
        const text = JSON.stringify({
          jsonrpc: '2.0',
          id: name,
          method: 'tools/call',
          params: { name: 'write', arguments: { path, content } },
        });
        const bytes = Buffer.from(text);
        const body = chunked
          ? Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536))
          : text;
        const response = await raw(fx.url, { headers, body });
        assert.equal(response.status, 200, response.body.slice(0, 300));
        assert.equal(await readFile(path, 'utf8'), content, name);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a body of many small values with 413 before parsing it all, whether announced or chunked', async () => {
    // 300,000 empty objects: 900 KB that would parse into some 30 MB; a body this size may hold 145,000 tokens.
    const text = `{"jsonrpc":"2.0","id":"many","method":"tools/list","params":{"_meta":{"items":[${'{},'.repeat(299_999)}{}]}}}`;
    const bytes = Buffer.from(text);
    for (const body of [
      text,
      Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, i) => bytes.subarray(i * 65_536, (i + 1) * 65_536)),
    ]) {
      const response = await raw(fx.url, { headers, body });
      assert.equal(response.status, 413, response.body.slice(0, 300));
      assert.match(rpcError(response).message, /too many JSON values for its size .*send large data as one string/);
    }
    // The same kind of body with the values a request may carry (30,000 numbers) is served.
    const items = Array.from({ length: 30_000 }, (_, i) => i);
    const fine = await raw(fx.url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'fine', method: 'tools/list', params: { _meta: { items } } }),
    });
    assert.equal(fine.status, 200, fine.body.slice(0, 300));
    assert.match(fine.body, /"name":"bash"/);
  });

  it('serves a body nested 60,000 levels deep (the parser keeps its own stack, not the call stack)', async () => {
    const depth = 60_000;
    const body = `{"jsonrpc":"2.0","id":"deep","method":"tools/list","params":{"_meta":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
    const response = await raw(fx.url, { headers, body });
    assert.equal(response.status, 200, response.body.slice(0, 300));
    assert.match(response.body, /"name":"bash"/);
  });

  it('refuses a compressed body or one in another charset with 415, saying what to send', async () => {
    const gzip = await raw(fx.url, { headers: { ...headers, 'Content-Encoding': 'gzip' }, body: initialize });
    assert.equal(gzip.status, 415);
    assert.match(rpcError(gzip).message, /uncompressed/);
    const utf16 = await raw(fx.url, { headers: { ...headers, 'Content-Type': 'application/json; charset=utf-16' }, body: initialize });
    assert.equal(utf16.status, 415);
    assert.match(rpcError(utf16).message, /UTF-8/);
  });

  it('still serves the session after refusing bad requests', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'after',
      method: 'tools/call',
      params: { name: 'bash', arguments: { command: 'echo still here' } },
    });
    const response = await raw(fx.url, { headers, body });
    assert.equal(response.status, 200);
    assert.match(response.body, /still here/);
  });

  it('refuses a URL that names two places', async () => {
    const url = `${fx.url}?workspace_path=Crew/a&workspace_path=Crew/b`;
    const response = await raw(url, { body: initialize });
    assert.equal(response.status, 400);
    assert.match(rpcError(response).message, /names 2 places/);
  });

  it('answers 404 with a pointer to /mcp for any other path', async () => {
    const response = await raw(new URL('/other', fx.url).href, { body: initialize });
    assert.equal(response.status, 404);
    assert.match(response.body, /The MCP endpoint is \/mcp/);
  });

  it('refuses a foreign Host header even right after its own host was allowed', async () => {
    const port = new URL(fx.url).port;
    assert.equal((await raw(fx.url, { headers: { Host: `localhost:${port}` }, body: initialize })).status, 200);
    const response = await raw(fx.url, { headers: { Host: `attacker.example:${port}` }, body: initialize });
    assert.equal(response.status, 403);
    assert.match(rpcError(response).message, /Host "attacker\.example/);
  });
});
