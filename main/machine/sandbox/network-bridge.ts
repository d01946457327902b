import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { resolveWithSystem } from '../../network/target-check.js';
import type { NetworkMachine, NetworkRules } from './network-decision.js';
import { NetworkProxy } from './network-proxy.js';

/** Where the proxy's socket appears inside the sandbox: in its own /dev, which the sandbox makes. */
export const SANDBOX_PROXY_DIR = '/dev/network-proxy';
/** The port of the bridge inside the sandbox's network namespace (its own loopback: no clash with the host). */
export const BRIDGE_PORT = 3128;
/** sockaddr_un holds 108 bytes with the final NUL. */
const MAX_SOCKET_PATH = 107;

/**
 * Inside the sandbox (its own network namespace, only a loopback), a TCP listener on
 * 127.0.0.1:BRIDGE_PORT passing each connection to the proxy's Unix socket. Run with the app's own
 * Node (argv: socket, port, then the command to run, if any). With a command it runs it once
 * listening and ends as it does (a sandbox per call); without, it says "ready" and serves (a live
 * sandbox's program).
 */
const BRIDGE_SCRIPT = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, port, ...command] = process.argv.slice(1);
delete process.env.ELECTRON_RUN_AS_NODE;
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream).on('error', () => upstream.destroy());
  upstream.pipe(client).on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.listen(Number(port), '127.0.0.1', () => {
  if (command.length === 0) return process.stdout.write('ready\\n');
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
});
`;

/** What a sandbox with network needs from the machine: where to put the proxy's socket, and the decision's facts. */
export interface SandboxNetworkSetup {
  readonly rules: NetworkRules;
  readonly machine: NetworkMachine;
  /** A private folder of the app's (inside its state dir: sealed in every sandbox), for the sockets. */
  readonly socketRoot: string;
}

/** The machine as the proxy sees it: the system resolver, the app's ports, this machine's interfaces. */
export function systemNetworkMachine(appPorts: () => readonly number[]): NetworkMachine {
  return {
    resolve: resolveWithSystem,
    appPorts,
    localAddresses: () =>
      Object.values(networkInterfaces())
        .flat()
        .flatMap((info) => (info ? [info.address] : [])),
  };
}

/**
 * The environment a sandboxed command gets to use the proxy (curl, pip, npm, git, Node's fetch with
 * it), at `port` on the loopback it sees: the bridge's in a namespace, the proxy's own on macOS.
 */
export function proxyEnv(port: number = BRIDGE_PORT): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
  };
}

/** The folder of the app's runtime (Node, or Electron run as Node), bound read-only under strict for the bridge. */
export function runtimeDir(): string {
  return dirname(process.execPath);
}

/** The environment bubblewrap (and the bridge) starts with: Electron's binary runs as plain Node only when told. */
export function bridgeEnv(env: Record<string, string>): Record<string, string> {
  return process.versions.electron ? { ...env, ELECTRON_RUN_AS_NODE: '1' } : env;
}

/**
 * A running proxy for one sandbox: its socket in a fresh private folder, the bubblewrap arguments
 * that bind that folder into the sandbox, and the bridge's command line.
 */
export class SandboxNetwork {
  private constructor(
    private readonly dir: string,
    private readonly proxy: NetworkProxy,
  ) {}

  static async open(setup: SandboxNetworkSetup): Promise<SandboxNetwork> {
    await mkdir(setup.socketRoot, { recursive: true, mode: 0o700 });
    const dir = await mkdtemp(join(setup.socketRoot, 'p-'));
    const socket = join(dir, 's');
    try {
      if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
        throw new Error(
          `The sandbox's network proxy cannot listen at ${socket}: a Unix socket path has at most ${MAX_SOCKET_PATH} bytes. Choose a shorter state folder (WORKSPACE_STATE_DIR).`,
        );
      }
      return new SandboxNetwork(dir, await NetworkProxy.start(socket, setup.rules, setup.machine));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** bubblewrap's arguments binding the proxy's folder into the sandbox (after its /dev is made). */
  get mountArgs(): string[] {
    return ['--ro-bind', this.dir, SANDBOX_PROXY_DIR];
  }

  /** The bridge, then `command` (none: serve until the sandbox ends). */
  bridge(command: readonly string[] = []): string[] {
    return [
      process.execPath,
      '-e',
      BRIDGE_SCRIPT,
      '--',
      join(SANDBOX_PROXY_DIR, basename(join(this.dir, 's'))),
      String(BRIDGE_PORT),
      ...command,
    ];
  }

  /** The bridge's name in /proc (what a live sandbox waits for as its program). */
  static get bridgeComm(): string {
    return basename(process.execPath).slice(0, 15);
  }

  async close(): Promise<void> {
    await this.proxy.close().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }
}
