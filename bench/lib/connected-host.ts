// Our host with a connection to the upstream, as the gateway benchmarks use it: a state dir set up
// with the CLI as a user sets one up (app tokens, the upstream's key as a secret of BENCH_PLACE,
// `connections add`), the host started on it, and the in-process timings run on the same state.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runNode, startServer, TSX_IMPORT, type ServerProcess } from './child.js';
import type { MicroResult } from './micro.js';
import { BENCH_PLACE, hostEnv, KEY_HEADER } from './shared.js';
import type { Upstream } from './upstream.js';

const GATEWAY_MICRO = fileURLToPath(new URL('../gateway-micro.ts', import.meta.url));
const SECRET_NAME = 'BENCH_KEY';

/** How our host lists the connection's `echo`: `<server name>__echo`. */
export const CONNECTION_ECHO = /^u[0-9a-f]{8}__[a-z0-9-]+__echo$/;

/** A state dir with the connection, and what a host on it runs with. */
export interface ConnectedState {
  /** The build (its dist/main/cli.js) that set it up, and that serves it. */
  cli: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** One app token per name asked for, in that order. */
  tokens: string[];
  /** What `connections add` printed: the connection's name and state. */
  connectionAdded: string;
  /** The commands run, as a user types them (the key on stdin). */
  commands: string[];
}

/** Sets up `dirs` with `cli`: a token for each of `tokenNames`, the upstream's key as a place secret, the connection. */
export async function connectState(
  cli: string,
  dirs: { state: string; work: string; tmp: string },
  upstream: Upstream,
  tokenNames: string[],
): Promise<ConnectedState> {
  await Promise.all(Object.values(dirs).map((d) => mkdir(d, { recursive: true, mode: 0o700 })));
  // Loopback upstreams allowed: the upstream is on this machine.
  const env = hostEnv(dirs, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
  const steps: Array<{ args: string[]; input?: string }> = [
    ...tokenNames.map((name) => ({ args: ['token', 'create', '--name', name, '--expires', '1d'] })),
    { args: ['secrets', 'set', SECRET_NAME, '--workspace-path', BENCH_PLACE], input: upstream.apiKey },
    {
      args: [
        'connections',
        'add',
        '--workspace-path',
        BENCH_PLACE,
        '--url',
        upstream.url,
        '--name',
        'Bench',
        '--header',
        KEY_HEADER,
        '--secret',
        SECRET_NAME,
      ],
    },
  ];
  const printed: string[] = [];
  for (const { args, input } of steps)
    printed.push((await runNode([cli, ...args], input === undefined ? { env, cwd: dirs.work } : { env, cwd: dirs.work, input })).trim());
  return {
    cli,
    env,
    cwd: dirs.work,
    tokens: printed.slice(0, tokenNames.length),
    connectionAdded: printed.at(-1)!,
    commands: steps.map(({ args, input }) => `${input === undefined ? '' : 'printf %s KEY | '}node dist/main/cli.js ${args.join(' ')}`),
  };
}

/** Our host on `state` on free ports, once it printed its URL; `node` goes before the program, `flags` after. */
export function startHost(
  state: Pick<ConnectedState, 'cli' | 'env' | 'cwd'>,
  name: string,
  { node = [], flags = [] }: { node?: string[]; flags?: string[] } = {},
): Promise<ServerProcess> {
  return startServer(name, [...node, state.cli, '--port', '0', '--control-port', '0', ...flags], { env: state.env, cwd: state.cwd });
}

/** `url` in BENCH_PLACE: a session there has the connection's tools. */
export function inBenchPlace(url: string): string {
  const u = new URL(url);
  u.searchParams.set('workspace_path', BENCH_PLACE);
  return u.href;
}

/** bench/gateway-micro.ts on `state`: the per-call steps of a forwarded call, timed in-process (with `token`, its auth too). */
export async function gatewayMicro(
  state: ConnectedState,
  upstream: Upstream,
  { token, node = [] }: { token?: string; node?: string[] } = {},
): Promise<MicroResult[]> {
  const env = { ...state.env, BENCH_UPSTREAM_URL: upstream.url, BENCH_UPSTREAM_KEY: upstream.apiKey, ...(token && { BENCH_TOKEN: token }) };
  return JSON.parse(await runNode([...node, '--import', TSX_IMPORT, GATEWAY_MICRO], { env, cwd: state.cwd })) as MicroResult[];
}
