/**
 * In-process timings of the per-call pieces of our gateway, run by bench/gateway.ts as a child
 * process with our host's environment (its state dir, where `connections add` put the bench's
 * connection and secret), so the services are made exactly as the host makes them
 * (`openServices(loadConfig())`). Prints a JSON array of MicroResult on stdout.
 *
 *   BENCH_UPSTREAM_URL=... BENCH_UPSTREAM_KEY=... WORKSPACE_STATE_DIR=... node --import tsx bench/gateway-micro.ts
 */
import { lookup } from 'node:dns/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../main/config.js';
import { PlaceTools } from '../main/mcp/place-tools.js';
import { placeFromRoot } from '../main/places/place-root.js';
import { openServices } from '../main/services.js';
import { time } from './lib/micro.js';
import { BENCH_PLACE, ECHO_TEXT, KEY_HEADER } from './lib/shared.js';

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
const apiKey = process.env.BENCH_UPSTREAM_KEY;
if (!upstreamUrl || !apiKey) throw new Error('set BENCH_UPSTREAM_URL and BENCH_UPSTREAM_KEY');

const logged: string[] = [];
const services = await openServices(loadConfig({ port: 0, controlPort: 0 }), (line) => logged.push(line));
// The host polls the connection file for other processes' changes; nothing changes it here.
services.store.close();
const place = placeFromRoot(BENCH_PLACE);
const tools = new PlaceTools(place, {
  connections: services.connections,
  gateway: services.gateway,
  health: services.health,
  catalogDescription: () => undefined,
  report: (line) => logged.push(line),
});
const sdkClient = new Client({ name: 'bench-micro', version: '1.0.0' });
await sdkClient.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl), { requestInit: { headers: { [KEY_HEADER]: apiKey } } }));
try {
  const [connection, ...others] = await services.connections.usable(place);
  if (!connection || others.length > 0) throw new Error(`expected the one bench connection to be usable; log: ${logged.join(' | ')}`);
  const upstream = await services.gateway.upstream(connection);
  const results = [
    await time('PlaceConnections.usable(place) (once per call, in the tool lookup)', () => services.connections.usable(place)),
    await time('  of which AccessDirectory.snapshot() (access.json)', () => services.access.snapshot()),
    await time('  of which ConnectionStore.list(root) (attachments.json)', () => services.store.list(place.root)),
    await time('  of which PlaceSecrets.names(root) (reads and parses secrets.enc.json)', () => services.placeSecrets.names(place.root)),
    await time('PlaceTools.tools() (the tool lookup per call: usable() + the cached upstream list, renamed)', () => tools.tools()),
    await time(
      'the forward: Gateway.upstream(connection).call(echo), our pooled client, to the upstream process',
      () => upstream.call('echo', { text: ECHO_TEXT }),
      0.25,
    ),
    await time(
      '  reference: a plain SDK Client.callTool(echo) to the upstream process (global fetch)',
      () => sdkClient.callTool({ name: 'echo', arguments: { text: ECHO_TEXT } }),
      0.25,
    ),
    // Not paid in this bench (its URL has an IP address), but by every forwarded call to a URL with
    // a host name: the SSRF check resolves it before each request (network/target-check.ts).
    await time('not in this bench: dns.lookup("localhost", { all: true }), the per-request check of a host name', () =>
      lookup('localhost', { all: true }),
    ),
  ];
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  await sdkClient.close().catch(() => {});
  await services.close();
}
