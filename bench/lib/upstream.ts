// The upstream MCP server of the gateway benchmarks (bench/upstream-server.ts) in its own process,
// and the call of its `echo` tool, checked to answer as it does.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startServer, TSX_IMPORT, type ServerProcess } from './child.js';
import { textOf, type Call } from './load.js';
import { ECHO_TEXT, KEY_HEADER } from './shared.js';

const UPSTREAM_SERVER = fileURLToPath(new URL('../upstream-server.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** The upstream, and the API key it wants in KEY_HEADER. */
export type Upstream = ServerProcess & { apiKey: string };

/** Starts the upstream with a key of this run's own, so that nothing but this run's setup can know it. */
export async function startUpstream(): Promise<Upstream> {
  const apiKey = `sk-bench-${randomBytes(12).toString('hex')}`;
  const server = await startServer('upstream', ['--import', TSX_IMPORT, UPSTREAM_SERVER, '--header', KEY_HEADER], {
    env: { ...process.env, BENCH_UPSTREAM_KEY: apiKey },
    cwd: REPO,
  });
  return { ...server, apiKey };
}

const ECHOED = `echo: ${ECHO_TEXT}`;

/** A call of the upstream's `echo` by `name` (its own, or the one a gateway lists it under). */
export function echoCall(name: string): Call {
  return {
    name,
    arguments: { text: ECHO_TEXT },
    check: (r: CallToolResult) => {
      if (r.isError || textOf(r) !== ECHOED) throw new Error(`echo: unexpected answer ${JSON.stringify(r).slice(0, 300)}`);
    },
  };
}
