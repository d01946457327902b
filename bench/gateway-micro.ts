/**
 * In-process timings of the per-call steps of a call forwarded by our gateway, run by
 * bench/gateway.ts and bench/peers.ts (`--only micro`) as a child process with our host's
 * environment (its state dir, where `connections add` put the bench's connection and secret), so
 * the services are made exactly as the host makes them (`openServices(loadConfig())`). Prints a
 * JSON array of MicroResult on stdout. Each step is timed alone, in the order a call takes them.
 *
 *   BENCH_UPSTREAM_URL=... BENCH_UPSTREAM_KEY=... [BENCH_TOKEN=...] WORKSPACE_STATE_DIR=... node --import tsx bench/gateway-micro.ts
 */
import { lookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolRequestSchema, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { JwtVerifier } from '../main/auth/jwt-verifier.js';
import { loadConfig } from '../main/config.js';
import { ToolArguments } from '../main/connections/gateway/tool-arguments.js';
import { readJsonBody } from '../main/http/json-body.js';
import { PlacePolicy } from '../main/mcp/place-policy.js';
import { PlaceTools } from '../main/mcp/place-tools.js';
import { placeFromRoot } from '../main/places/place-root.js';
import { openServices } from '../main/services.js';
import { time, type MicroResult } from './lib/micro.js';
import { BENCH_PLACE, ECHO_TEXT, KEY_HEADER } from './lib/shared.js';

const upstreamUrl = process.env.BENCH_UPSTREAM_URL;
const apiKey = process.env.BENCH_UPSTREAM_KEY;
const token = process.env.BENCH_TOKEN;
if (!upstreamUrl || !apiKey) throw new Error('set BENCH_UPSTREAM_URL and BENCH_UPSTREAM_KEY');

const logged: string[] = [];
const config = loadConfig({ port: 0, controlPort: 0 });
const services = await openServices(config, (line) => logged.push(line));
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
const policy = new PlacePolicy(place, services.access, {
  workspaceRoot: config.workspaceRoot,
  stateDir: config.stateDir,
  skillsDir: config.skillsDir,
  env: process.env,
});
const sdkClient = new Client({ name: 'bench-micro', version: '1.0.0' });
await sdkClient.connect(new StreamableHTTPClientTransport(new URL(upstreamUrl), { requestInit: { headers: { [KEY_HEADER]: apiKey } } }));
try {
  const [connection, ...others] = await services.connections.usable(place);
  if (!connection || others.length > 0) throw new Error(`expected the one bench connection to be usable; log: ${logged.join(' | ')}`);
  const upstream = await services.gateway.upstream(connection);
  const listed = await tools.tools();
  const name = listed[0]!.definition.name;
  const schema = (await upstream.tools())[0]!.inputSchema;
  const request = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: { text: ECHO_TEXT } } };
  const body = Buffer.from(JSON.stringify(request));
  const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
  // What readJsonBody reads of a request: its method, headers and body.
  const incoming = () => Object.assign(Readable.from([body]), { method: 'POST', headers }) as unknown as IncomingMessage;
  const result = await upstream.call('echo', { text: ECHO_TEXT });
  const args = new ToolArguments();
  const results: MicroResult[] = [];
  if (token) {
    const verifier = await JwtVerifier.create({ appTokens: services.tokens, grants: services.agentAuthorization });
    const header = `Bearer ${token}`;
    results.push(
      await time('auth: JwtVerifier.verifyAuthorization (app token, verified before)', () => verifier.verifyAuthorization(header)),
    );
    results.push(
      await time('  of which AgentTokenStore.status (the revocation check: a stat of the token file)', () =>
        services.tokens.status(tokenIdOf(token)),
      ),
    );
  }
  results.push(
    await time(`body: readJsonBody of the tools/call request (${body.length} bytes, a stream made per call)`, () =>
      readJsonBody(incoming(), 64 * 2 ** 20),
    ),
    await time('  reference: making that stream alone', () => incoming()),
    await time('request check: CallToolRequestSchema.safeParse', () => CallToolRequestSchema.safeParse(request)),
    await time('tool lookup: PlaceTools.tools() and the name found in it', async () =>
      (await tools.tools()).find((t) => t.definition.name === name),
    ),
    await time('  of which PlaceConnections.usable(place)', () => services.connections.usable(place)),
    await time('  of which AccessDirectory.snapshot() (access.json: a stat)', () => services.access.snapshot()),
    await time("audit: the place's policy (PlacePolicy.current)", () => policy.current()),
    await time('audit: AuditLog.record (written in batches)', () =>
      services.audit.record({ tool: name, caller: 'token:bench', place: place.root, policy: 'machine', durationMs: 1, outcome: 'ok' }),
    ),
    await time('arguments: ToolArguments.problems (the upstream schema, compiled once)', () => args.problems(schema, { text: ECHO_TEXT })),
    await time(
      'the forward: Gateway.upstream(connection).call(echo), our pooled client, to the upstream process',
      async () => (await services.gateway.upstream(connection)).call('echo', { text: ECHO_TEXT }),
      0.25,
    ),
    await time('result check: CallToolResultSchema.safeParse', () => CallToolResultSchema.safeParse(result)),
    await time('answer: JSON.stringify of the JSON-RPC answer', () => JSON.stringify({ jsonrpc: '2.0', id: 7, result })),
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
  );
  process.stdout.write(`${JSON.stringify(results)}\n`);
} finally {
  await sdkClient.close().catch(() => {});
  await services.close();
}

/** An app token's id: its `jti` claim. */
function tokenIdOf(jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;
}
