// mcp-hub, the peer gateway bench/peers.ts measures ours against (issue 28): installed once at the
// issue's version with npm, the ordinary client, into node_modules/.cache/bench-peers, and run in its
// own process on a free port, serving the bench's upstream. It speaks only the SSE transport to clients.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openSseSession, type Session } from './load.js';
import { KEY_HEADER } from './shared.js';
import type { Upstream } from './upstream.js';
import { log, sleep } from './util.js';

export const MCP_HUB_VERSION = '4.2.1';
const PEERS_DIR = fileURLToPath(new URL('../../node_modules/.cache/bench-peers', import.meta.url));
const MCP_HUB_CLI = join(PEERS_DIR, 'node_modules', 'mcp-hub', 'dist', 'cli.js');
const START_TIMEOUT_MS = 30_000;

export async function installMcpHub(): Promise<void> {
  if (existsSync(MCP_HUB_CLI)) return;
  log(`installing mcp-hub ${MCP_HUB_VERSION} into ${PEERS_DIR}`);
  await mkdir(PEERS_DIR, { recursive: true });
  await promisify(execFile)(
    'npm',
    ['install', '--prefix', PEERS_DIR, '--no-save', '--no-audit', '--no-fund', `mcp-hub@${MCP_HUB_VERSION}`],
    { cwd: PEERS_DIR },
  );
}

/** A running mcp-hub: `url` is its SSE endpoint, `first` the session that found it answering. */
export interface McpHub {
  pid: number;
  url: string;
  first: Session;
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Sets mcp-hub up in `root` to serve `upstream` (its config file, and its logs and state under XDG
 * folders there rather than the user's), and returns what starts one, with `node` flags before it.
 */
export async function mcpHubServing(root: string, upstream: Upstream): Promise<(node?: string[]) => Promise<McpHub>> {
  const config = join(root, 'mcp-hub.json');
  await writeFile(config, JSON.stringify({ mcpServers: { bench: { url: upstream.url, headers: { [KEY_HEADER]: upstream.apiKey } } } }));
  const env = {
    ...process.env,
    HOME: root,
    XDG_STATE_HOME: join(root, 'xdg-state'),
    XDG_CONFIG_HOME: join(root, 'xdg-config'),
    XDG_DATA_HOME: join(root, 'xdg-data'),
  };
  return async (node = []) => {
    const port = await freePort();
    const child = spawn(process.execPath, [...node, MCP_HUB_CLI, '--port', String(port), '--config', config], {
      env,
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-4096)));
    const stop = async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await new Promise((r) => child.once('exit', r));
      clearTimeout(timer);
    };
    const url = `http://127.0.0.1:${port}/mcp`;
    const until = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      try {
        return { pid: child.pid!, url, first: await openSseSession(url), stderr: () => err, stop };
      } catch (error) {
        if (Date.now() > until || child.exitCode !== null) {
          await stop();
          throw new Error(`mcp-hub did not take a session within ${START_TIMEOUT_MS / 1000} s: ${(error as Error).message}\n${err}`);
        }
        await sleep(10);
      }
    }
  };
}

/** A port free right now (mcp-hub wants one named; it has no port 0). */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
