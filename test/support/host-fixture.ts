import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig, type ServeFlags } from '../../main/config.js';
import { Host } from '../../main/host.js';

export interface HostFixture {
  host: Host;
  url: string;
  stateDir: string;
  /** What the host logged for the person running it. */
  logs: string[];
  /** A fresh app token. */
  token(name?: string): Promise<string>;
  /** An MCP client connected to /mcp with the given bearer token (or none). */
  connect(token?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;
  close(): Promise<void>;
}

/** A real host on a free loopback port with its own state dir. */
export async function startHost(flags: ServeFlags = {}, env: Record<string, string> = {}): Promise<HostFixture> {
  const stateDir = await mkdtemp(join(tmpdir(), 'pw-state-'));
  const logs: string[] = [];
  const fullEnv = { WORKSPACE_REGISTRY_URL: '', WORKSPACE_SECRET_STORE: 'file', ...env, WORKSPACE_STATE_DIR: stateDir };
  const host = new Host(loadConfig({ port: 0, controlPort: 0, ...flags }, fullEnv), { log: (line) => logs.push(line), env: fullEnv });
  const url = await host.start();
  const tokens = await host.tokens();
  const clients: Client[] = [];
  return {
    host,
    url,
    stateDir,
    logs,
    token: async (name = 'test') => (await tokens.create({ name })).token,
    connect: async (token) => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : {},
      });
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(transport);
      clients.push(client);
      return { client, transport };
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await host.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** The first text block of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  const block = content.find((c) => c.type === 'text');
  if (!block?.text) throw new Error(`no text content in ${JSON.stringify(result).slice(0, 300)}`);
  return block.text;
}

// The tests that start a host wait with the shared helper; it is here for them to import with the fixture.
export { waitFor } from './wait.js';

/** Whether `pid` is a live process; a zombie (dead, waiting to be reaped by init) is not. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // The state letter follows the parenthesised command name in /proc/<pid>/stat.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** A loopback port that is free now (found by listening on 0, then closing). */
export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

/**
 * A fresh workspace with these folders (places such as `Crew/alpha`), made the working directory,
 * which is the host's workspace root; `leave` goes back to the previous one and deletes it.
 */
export async function enterWorkspace(prefix: string, folders: string[] = []): Promise<{ dir: string; leave(): Promise<void> }> {
  const previous = process.cwd();
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  for (const folder of folders) await mkdir(join(dir, folder), { recursive: true });
  process.chdir(dir);
  return {
    dir,
    leave: async () => {
      process.chdir(previous);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
