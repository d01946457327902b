/**
 * The floor of any gateway, for the gateway benchmark's breakdown: a transparent HTTP relay that
 * sends each request as it came (method, headers, body) to the upstream MCP server, over undici's
 * keep-alive pool, and streams the answer back. No MCP, no auth, no checks: what one more HTTP hop
 * costs on this machine, whatever the gateway does with the messages.
 *
 *   node --import tsx bench/relay-server.ts --upstream URL [--bytes | --socat]
 *
 * With --bytes it relays TCP instead: each connection piped to a connection of its own to the
 * upstream, no HTTP parsed at all (the least one more process on the path costs in Node). With
 * --socat, socat (C, a process forked per connection) does the same, if it is installed: the least
 * one more process costs on this machine in any language. Its CPU is socat's, not this process's.
 *
 * Prints `relay listening on <url>` on stdout; SIGTERM or SIGINT stops it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';

const at = process.argv.indexOf('--upstream');
if (at === -1) throw new Error('usage: relay-server.ts --upstream URL');
const upstream = new URL(process.argv[at + 1]!);
const agent = new Agent();
// Headers of one hop, not of the message.
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function endToEnd(headers: http.IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && typeof value === 'string') kept[name] = value;
  return kept;
}

const httpRelay = (): http.Server =>
  http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const request: Dispatcher.RequestOptions = {
        origin: upstream.origin,
        path: upstream.pathname,
        method: req.method as Dispatcher.HttpMethod,
        headers: endToEnd(req.headers),
        ...(body && { body }),
      };
      agent.request(request).then(
        (answer) => {
          res.writeHead(answer.statusCode, endToEnd(answer.headers as http.IncomingHttpHeaders));
          answer.body.pipe(res);
          res.on('close', () => answer.body.destroy());
        },
        (error: Error) => res.writeHead(502).end(error.message),
      );
    });
  });

const byteRelay = (): net.Server =>
  net.createServer({ noDelay: true }, (client) => {
    const server = net.connect({ host: upstream.hostname, port: Number(upstream.port), noDelay: true });
    client.pipe(server).pipe(client);
    const end = (): void => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  });

const announce = (port: number): void => {
  process.stdout.write(`relay listening on http://127.0.0.1:${port}${upstream.pathname}\n`);
};

if (process.argv.includes('--socat')) {
  // A port free a moment ago: socat cannot report one it picked.
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  const socat = spawn(
    'socat',
    [`TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork,nodelay`, `TCP:${upstream.hostname}:${upstream.port},nodelay`],
    { stdio: 'inherit' },
  );
  socat.once('exit', (code) => process.exit(code ?? 1));
  // socat listens as it starts; a connection made too early is refused, so wait until one is taken.
  for (;;) {
    const attempt = net.connect(port, '127.0.0.1');
    const ok = await new Promise<boolean>((resolve) => attempt.once('connect', () => resolve(true)).once('error', () => resolve(false)));
    attempt.destroy();
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  announce(port);
  const stop = (): void => {
    socat.kill('SIGTERM');
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  const server: http.Server | net.Server = process.argv.includes('--bytes') ? byteRelay() : httpRelay();
  server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
  const stop = (): void => {
    if (server instanceof http.Server) {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    } else process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
