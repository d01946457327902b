/**
 * The floor of any gateway, for the gateway benchmark's breakdown: a transparent HTTP relay that
 * sends each request as it came (method, headers, body) to the upstream MCP server, over undici's
 * keep-alive pool, and streams the answer back. No MCP, no auth, no checks: what one more HTTP hop
 * costs on this machine, whatever the gateway does with the messages.
 *
 *   node --import tsx bench/relay-server.ts --upstream URL
 *
 * Prints `relay listening on <url>` on stdout; SIGTERM or SIGINT stops it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

const server = http.createServer((req, res) => {
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

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`relay listening on http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp\n`);
});
const stop = (): void => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
