import { once } from 'node:events';
import {
  createServer,
  request,
  STATUS_CODES,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type LookupFunction, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ResolvedAddress } from '../../network/target-check.js';
import { decideConnection, type ConnectDecision, type NetworkMachine, type NetworkRules } from './network-decision.js';

/** Headers that describe one hop (client to proxy), never passed on (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The HTTP proxy a place's sandboxed commands reach the network through: on Linux on a Unix socket
 * bound into their sandbox (network-bridge.ts), on macOS on a loopback port that only their
 * Seatbelt profile lets them reach (seatbelt-network.ts). It takes CONNECT (HTTPS and any TCP) and plain-HTTP
 * requests in absolute form, decides each target (network-decision.ts), and connects only to the
 * addresses it checked: a second DNS answer cannot swap in another one. A refusal answers 403 with
 * the reason as the body and in a Proxy-Status header (RFC 9209).
 */
export class NetworkProxy {
  private readonly sockets = new Set<Duplex>();

  private constructor(private readonly server: Server) {}

  /** Listening on the Unix socket `at`, or with `{ loopbackPort }` on 127.0.0.1 (0: a free port). */
  static async start(at: string | { loopbackPort: number }, rules: NetworkRules, machine: NetworkMachine): Promise<NetworkProxy> {
    const server = createServer();
    const proxy = new NetworkProxy(server);
    server.on('connection', (socket: Socket) => proxy.track(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void proxy.forward(req, res, rules, machine));
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => void proxy.tunnel(req, client, head, rules, machine));
    server.on('upgrade', (_req: IncomingMessage, client: Duplex) => {
      rawAnswer(
        client,
        501,
        'http_request_error',
        "The sandbox's network proxy does not pass on protocol upgrades in plain HTTP; use an https or wss URL (a CONNECT tunnel).",
      );
    });
    if (typeof at === 'string') server.listen(at);
    else server.listen(at.loopbackPort, '127.0.0.1');
    await once(server, 'listening');
    return proxy;
  }

  /** The TCP port it listens on (started with a loopback port). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every connection still open. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private track<T extends Duplex>(socket: T): T {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    return socket;
  }

  /** A plain-HTTP request in absolute form (http://host/path), passed on to the checked address. */
  private async forward(req: IncomingMessage, res: ServerResponse, rules: NetworkRules, machine: NetworkMachine): Promise<void> {
    const url = absoluteHttpUrl(req.url ?? '');
    if (!url) {
      const message = (req.url ?? '').startsWith('https:')
        ? "The sandbox's network proxy takes https through CONNECT: set HTTPS_PROXY (it is set for sandboxed commands) rather than sending https URLs to it."
        : "This is the sandbox's network proxy: send requests in absolute form (http://host/path), or CONNECT host:port.";
      answer(res, 400, 'http_request_error', message);
      req.resume();
      return;
    }
    const decision = await decideConnection(url.hostname, url.port || '80', rules, machine);
    if (!decision.allowed) {
      answer(res, decision.status, decision.proxyError, decision.message);
      req.resume();
      return;
    }
    const upstream = request({
      host: decision.host,
      port: decision.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: endToEnd(req.headers),
      lookup: pinned(decision.addresses),
      setHost: false,
      // A connection of its own: a pooled one would outlive this proxy (which destroys what it
      // tracks when its sandbox ends) and carry another sandbox's request.
      agent: false,
    });
    upstream.on('socket', (socket) => this.track(socket));
    upstream.once('response', (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.statusMessage, endToEnd(reply.headers));
      reply.pipe(res);
    });
    upstream.once('error', (error) => {
      if (res.headersSent) res.destroy();
      else answer(res, 502, 'connection_refused', `Cannot connect to ${url.host}: ${error.message}.`);
    });
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  /** CONNECT host:port: a tunnel to the checked address once the target is allowed. */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer, rules: NetworkRules, machine: NetworkMachine): Promise<void> {
    this.track(client);
    client.on('error', () => client.destroy());
    const authority = /^(?:\[([^\]]*)\]|([^:]*)):([^:]*)$/.exec(req.url ?? '');
    const decision: ConnectDecision = authority
      ? await decideConnection(authority[1] ?? authority[2] ?? '', authority[3] ?? '', rules, machine)
      : {
          allowed: false,
          status: 400,
          proxyError: 'http_request_error',
          message: `CONNECT needs host:port, not ${JSON.stringify(req.url)}.`,
        };
    if (!decision.allowed) {
      rawAnswer(client, decision.status, decision.proxyError, decision.message);
      return;
    }
    const upstream = this.track(connect({ host: decision.host, port: decision.port, lookup: pinned(decision.addresses) }));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('error', (error) => {
      if (upstream.connecting) rawAnswer(client, 502, 'connection_refused', `Cannot connect to ${req.url}: ${error.message}.`);
      else client.destroy();
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }
}

function absoluteHttpUrl(target: string): URL | undefined {
  if (!/^http:\/\//i.test(target)) return undefined;
  try {
    return new URL(target);
  } catch {
    return undefined;
  }
}

/** The headers without those of one hop, nor those the Connection header names. */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((name) => name.trim()),
  );
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)));
}

/** A lookup that answers the addresses the decision checked, never DNS. */
function pinned(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    const usable = addresses.filter((a) => wanted === 0 || a.family === wanted);
    process.nextTick(() => {
      const first = usable[0];
      if (!first) callback(Object.assign(new Error('no checked address of that family'), { code: 'ENOTFOUND' }), '', 0);
      else if (options.all)
        callback(
          null,
          usable.map((a) => ({ address: a.address, family: a.family })),
        );
      else callback(null, first.address, first.family);
    });
  };
}

/** RFC 9209: `persona-sandbox; error=...; details="..."`, the details as an ASCII string. */
function proxyStatus(error: string, details: string): string {
  const text = details.replace(/[^\x20-\x7e]/g, '?').replace(/[\\"]/g, (c) => `\\${c}`);
  return `persona-sandbox; error=${error}; details="${text}"`;
}

function answer(res: ServerResponse, status: number, error: string, message: string): void {
  const body = `${message}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'proxy-status': proxyStatus(error, message),
  });
  res.end(body);
}

/** An answer written on a socket the HTTP server has let go of (CONNECT, upgrade), then the end. */
function rawAnswer(socket: Duplex, status: number, error: string, message: string): void {
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `proxy-status: ${proxyStatus(error, message)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
