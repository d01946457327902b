import assert from 'node:assert/strict';
import { once } from 'node:events';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { sseData } from '../../test/support/sse.js';
import { DirectToolCalls } from './direct-tool-calls.js';
import type { SessionTool } from './session-tool.js';
import { installToolTable, toolCallOf } from './tool-table.js';

// tools/call answered by the sessions layer itself, through the real agent endpoint, with raw HTTP
// so that the wire format (JSON or event stream, headers, ids) is what is checked.
let fx: HostFixture;
let headers: Record<string, string>;

before(async () => {
  fx = await startHost({}, { WORKSPACE_SHELL_MAX_TIMEOUT: '30' });
  const token = await fx.token();
  const { transport } = await fx.connect(token);
  headers = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': transport.sessionId!,
    'mcp-protocol-version': transport.protocolVersion!,
  };
});

after(() => fx.close());

function post(body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(fx.url, { method: 'POST', headers, body: JSON.stringify(body), ...(signal && { signal }) });
}

const bash = (id: number | string, command: string, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'bash', arguments: { command }, ...(meta && { _meta: meta }) },
});

async function events(response: Response): Promise<Array<Record<string, unknown>>> {
  return sseData(await response.text()).map((data) => JSON.parse(data) as Record<string, unknown>);
}

describe('tools/call answered without the SDK transport', () => {
  it('answers with one JSON body when the tool sends nothing before its result', async () => {
    const response = await post(bash('plain-1', 'echo hi'));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal(response.headers.get('mcp-session-id'), headers['mcp-session-id']);
    const answer = (await response.json()) as { id: unknown; result: { structuredContent: Record<string, unknown> } };
    assert.equal(answer.id, 'plain-1');
    assert.equal(answer.result.structuredContent['exitCode'], 0);
  });

  it("switches to an event stream for progress, which comes first under the caller's token, then the result", async () => {
    const response = await post(bash(7, 'for i in 1 2 3; do echo "tick $i"; sleep 0.6; done', { progressToken: 'p-7' }));
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    const messages = await events(response);
    const last = messages.pop()!;
    assert.equal(last.id, 7);
    assert.ok('result' in last);
    assert.ok(messages.length >= 1);
    for (const message of messages) {
      assert.equal(message.method, 'notifications/progress');
      assert.equal((message.params as { progressToken: unknown }).progressToken, 'p-7');
    }
  });

  it('stops a call on notifications/cancelled and ends its stream without an answer', async () => {
    const started = Date.now();
    const marker = join(fx.stateDir, 'long-started');
    const pending = post(bash('long', `touch ${marker}; sleep 30`));
    await waitFor(
      () =>
        stat(marker).then(
          () => true,
          () => false,
        ),
      10_000,
      'the command to start',
    );
    const cancel = await post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'long', reason: 'changed my mind' },
    });
    assert.equal(cancel.status, 202);
    const response = await pending;
    assert.equal(response.status, 200);
    assert.deepEqual(await events(response), []);
    assert.ok(Date.now() - started < 10_000);
  });

  it('answers an invalid call with a JSON-RPC error, as the SDK server does', async () => {
    const response = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'bash', arguments: 'not an object' } });
    const answer = (await response.json()) as { id: unknown; error: { code: number; message: string } };
    assert.equal(answer.id, 9);
    assert.equal(answer.error.code, -32602);
    assert.match(answer.error.message, /Invalid tools\/call request/);
  });

  it('leaves batches and requests the SDK transport must refuse to it', async () => {
    const batch = await post([bash(11, 'echo batched')]);
    assert.equal(batch.headers.get('content-type'), 'text/event-stream');
    assert.equal((await events(batch))[0]?.id, 11);
    const noAccept = await fetch(fx.url, {
      method: 'POST',
      headers: { ...headers, accept: 'application/json' },
      body: JSON.stringify(bash(12, 'echo x')),
    });
    assert.equal(noAccept.status, 406);
    const oldVersion = await fetch(fx.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-protocol-version': '1999-01-01' },
      body: JSON.stringify(bash(13, 'echo x')),
    });
    assert.equal(oldVersion.status, 400);
  });
});

describe('a long call answered without the SDK transport', () => {
  it('sends its headers and keep-alive comments while the tool runs, as the SDK transport does, then the result', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let done = false;
    const waits: SessionTool = {
      definition: { name: 'waits', inputSchema: { type: 'object' } },
      call: async () => {
        await released;
        done = true;
        return { content: [{ type: 'text', text: 'done' }] };
      },
    };
    const server = new McpServer({ name: 't', version: '1' });
    installToolTable(
      server,
      [waits],
      [],
      (_tool, _extra, fn) => fn(),
      async () => false,
    );
    const direct = new DirectToolCalls('s-1', server, toolCallOf(server)!, 50);
    const http = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      req.on('end', () => assert.ok(direct.take(req, res, JSON.parse(text))));
    }).listen(0, '127.0.0.1');
    await once(http, 'listening');
    // The tool ends on its own after 5 s at the latest, so a missing stream fails rather than hangs.
    const timer = setTimeout(release, 5_000);
    try {
      const response = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'waits', arguments: {} } }),
      });
      assert.equal(done, false, 'the headers came while the tool still ran');
      assert.equal(response.headers.get('content-type'), 'text/event-stream');
      assert.equal(response.headers.get('mcp-session-id'), 's-1');
      const reader = response.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^: keepalive\n\n/);
      release();
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
      const messages = sseData(first + rest).map((data) => JSON.parse(data) as { id: unknown; result: unknown });
      assert.deepEqual(messages, [{ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'done' }] } }]);
    } finally {
      clearTimeout(timer);
      http.close();
    }
  });
});
