import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';

// A client keeps an idle keep-alive connection for as long as the server's hint allows (or its own
// default when there is none) and may send its next call on it at any moment until then. Calls were
// lost ("fetch failed") when the server closed such a connection first: Node's default closes it
// 5 s after an answer, and answers on an event stream carried no hint at all. These requests go on
// one raw connection, as a client's pool sends them, so that a close is seen for what it is.

/** Node's own idle timeout, which lost the calls: the connection must outlive it. */
const NODE_DEFAULT_IDLE_MS = 5_000;

/** One HTTP/1.1 connection that sends requests one after another and reads each answer whole. */
class Connection {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  static async open(url: string): Promise<Connection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new Connection(socket);
  }

  async post(path: string, headers: Record<string, string>, body: string): Promise<{ head: string; body: string }> {
    if (this.closed) throw new Error('the server closed the idle connection');
    const lines = Object.entries({ ...headers, 'Content-Length': String(Buffer.byteLength(body)) }).map(([k, v]) => `${k}: ${v}\r\n`);
    this.socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}\r\n${body}`);
    for (;;) {
      const answer = this.complete();
      if (answer) return answer;
      if (this.closed) throw new Error(`the server closed the connection without an answer (${this.buffer.length} bytes came)`);
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  /** The first whole answer in the buffer (taken out of it), with its body de-chunked. */
  private complete(): { head: string; body: string } | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const head = this.buffer.subarray(0, end).toString();
    const rest = this.buffer.subarray(end + 4);
    const length = /^content-length: *(\d+)/im.exec(head);
    if (length) {
      if (rest.length < Number(length[1])) return undefined;
      this.buffer = rest.subarray(Number(length[1]));
      return { head, body: rest.subarray(0, Number(length[1])).toString() };
    }
    assert.match(head, /^transfer-encoding: *chunked/im);
    let body = '';
    for (let at = 0; ;) {
      const line = rest.indexOf('\r\n', at);
      if (line === -1) return undefined;
      const size = parseInt(rest.subarray(at, line).toString(), 16);
      if (rest.length < line + 2 + size + 2) return undefined;
      if (size === 0) {
        this.buffer = rest.subarray(line + 4);
        return { head, body };
      }
      body += rest.subarray(line + 2, line + 2 + size).toString();
      at = line + 2 + size + 2;
    }
  }
}

describe('idle keep-alive connections of the agent endpoint', () => {
  let fx: HostFixture;
  let headers: Record<string, string>;

  before(async () => {
    fx = await startHost({}, { WORKSPACE_SHELL_MAX_TIMEOUT: '30' });
    const token = await fx.token();
    const { transport } = await fx.connect(token);
    headers = {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': transport.sessionId!,
      'Mcp-Protocol-Version': transport.protocolVersion!,
    };
  });
  after(() => fx.close());

  const call = (id: string, command: string, meta?: Record<string, unknown>) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'bash', arguments: { command }, ...(meta && { _meta: meta }) },
    });

  it("keeps a connection past Node's 5 s after a JSON answer and after an event stream, and tells clients how long", async () => {
    const json = await Connection.open(fx.url);
    const stream = await Connection.open(fx.url);
    try {
      const first = await Promise.all([
        json.post('/mcp', headers, call('json-1', 'echo one')),
        // Progress (sent each second while a command runs) turns the answer into an event stream.
        stream.post('/mcp', headers, call('sse-1', 'echo one; sleep 1.3; echo two', { progressToken: 'p' })),
      ]);
      assert.match(first[0].head, /^content-type: application\/json/im);
      assert.match(first[1].head, /^content-type: text\/event-stream/im);
      for (const { head } of first) {
        const hint = /^keep-alive: *timeout=(\d+)/im.exec(head);
        assert.ok(hint, `every answer says how long an idle connection is kept:\n${head}`);
        assert.ok(Number(hint[1]) * 1000 > NODE_DEFAULT_IDLE_MS, head);
      }
      // A client whose pool still holds the connection (the hint allows it) sends its next call on it.
      await new Promise((resolve) => setTimeout(resolve, NODE_DEFAULT_IDLE_MS + 700));
      assert.equal(json.closed, false, 'the connection that answered in JSON is still open');
      assert.equal(stream.closed, false, 'the connection that answered with an event stream is still open');
      const second = await Promise.all([
        json.post('/mcp', headers, call('json-2', 'echo again')),
        stream.post('/mcp', headers, call('sse-2', 'echo again')),
      ]);
      for (const answer of second) assert.match(answer.body, /again/);
    } finally {
      json.close();
      stream.close();
    }
  });
});
