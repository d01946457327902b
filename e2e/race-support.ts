import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callApi, type ApiAnswer } from '../test/support/control-api.js';
import { enterWorkspace, startHost } from '../test/support/host-fixture.js';

// What the cross-process race tests share: a second process on the running host's state dir (the
// built CLI, or a fixture), and the host's API kept busy until that process is done.

/** The built bin (`npm run build` first). */
export const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));

export interface NodeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node args...` with `stdin` as its input. */
export function runNode(args: string[], env: NodeJS.ProcessEnv, stdin = ''): Promise<NodeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env });
    child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The environment of another process on the host's state dir and workspace: the encrypted-file
 * secret store the host fixture uses, no registry, and a config folder of its own, so the settings
 * file of whoever runs the tests never applies.
 */
function sharedStateEnv(stateDir: string, workspaceDir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: join(stateDir, 'config'),
    WORKSPACE_STATE_DIR: stateDir,
    WORKSPACE_CWD: workspaceDir,
    WORKSPACE_SECRET_STORE: 'file',
    WORKSPACE_REGISTRY_URL: '',
    WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
  };
}

/** A real host in a workspace of its own: its owner's API, and the environment of another process on its state dir. */
export interface RaceHost {
  stateDir: string;
  /** The page's API, as its owner. */
  api(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  /** sharedStateEnv of this host. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Starts a host for a race test, in a fresh workspace (`prefix` names its folder); `env` is the host's extra environment. */
export async function startRaceHost(prefix: string, env: Record<string, string> = {}): Promise<RaceHost> {
  const workspace = await enterWorkspace(prefix);
  const fx = await startHost({}, env);
  const controlUrl = await fx.host.open();
  const adminToken = await fx.host.adminToken();
  return {
    stateDir: fx.stateDir,
    api: (method, path, body) => callApi(controlUrl, adminToken, method, path, body),
    env: sharedStateEnv(fx.stateDir, workspace.dir),
    close: async () => {
      await fx.close();
      await workspace.leave();
    },
  };
}

export interface CliRun {
  args: string[];
  stdin?: string;
}

/**
 * Runs every command through the CLI, `parallel` processes at a time (so the CLI side also races
 * itself), each of which must succeed. Rejects at the first failure, with its output.
 */
export async function runCliAll(runs: readonly CliRun[], env: NodeJS.ProcessEnv, parallel = 2): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const { args, stdin } = runs[next++]!;
      const result = await runNode([CLI, ...args], env, stdin);
      assert.equal(result.code, 0, `${args.join(' ')} failed: ${result.stderr}${result.stdout}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/**
 * Calls `step` with 0, 1, 2, ... from `workers` concurrent loops until `done` settles (either way),
 * so the server keeps writing for as long as the other process does. Resolves with how many ran.
 */
export async function repeatUntil(done: Promise<unknown>, step: (n: number) => Promise<void>, workers = 2): Promise<number> {
  let finished = false;
  const stop = () => (finished = true);
  done.then(stop, stop);
  let count = 0;
  const worker = async () => {
    try {
      while (!finished) await step(count++);
    } catch (error) {
      // The other loops stop too, rather than run on until `done`.
      stop();
      throw error;
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  return count;
}
