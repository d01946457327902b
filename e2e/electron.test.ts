import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';

// The desktop app launched for real: Electron on the built app (package.json's main,
// dist/main/electron/main.js). Where no Electron binary can run (its download is blocked on the
// build machines) the whole suite is skipped, saying why; it never passes without launching.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'main', 'electron', 'main.js');
const CLI = join(ROOT, 'dist', 'main', 'cli.js');
const KEYCHAIN_SERVICE = `persona-electron-test-${process.pid}`;

/** The Electron binary, or why it cannot be used here. */
function findElectron(): { binary: string } | { skip: string } {
  // Where the electron package says its binary is (path.txt, written by its install step), found
  // without require('electron'), which would try to download a missing binary.
  let binary: string;
  try {
    const dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
    const relative = readFileSync(join(dir, 'path.txt'), 'utf8');
    binary = join(process.env.ELECTRON_OVERRIDE_DIST_PATH ?? join(dir, 'dist'), relative);
  } catch (error) {
    return { skip: `Electron binary not installed here: the electron package has no binary path (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  if (!existsSync(binary)) return { skip: `Electron binary not installed here: ${binary} does not exist` };
  const version = spawnSync(binary, ['--version'], { timeout: 10_000, encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '' } });
  if (version.error || version.status !== 0) {
    return { skip: `Electron binary not installed here: ${binary} --version failed (${version.error?.message ?? `exit ${version.status}: ${version.stderr.trim()}`})` };
  }
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { skip: 'Electron is installed but there is no display (DISPLAY or WAYLAND_DISPLAY); run under xvfb-run.' };
  }
  return { binary };
}

const electron = findElectron();
const skip = 'skip' in electron ? electron.skip : false;
if (skip) process.stderr.write(`e2e/electron.test.ts skipped: ${skip}\n`);

describe('the desktop app', () => {
  let userData: string;
  let stateDir: string;
  let workDir: string;

  function env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      ELECTRON_RUN_AS_NODE: '',
      WORKSPACE_STATE_DIR: stateDir,
      WORKSPACE_CWD: workDir,
      WORKSPACE_CONTROL_PORT: '0',
      WORKSPACE_REGISTRY_URL: '',
      WORKSPACE_KEYCHAIN_SERVICE: KEYCHAIN_SERVICE,
    };
  }

  function launch(): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
    // Chromium refuses to run as root with its sandbox on (containers, CI).
    const rootOnly = process.getuid?.() === 0 ? ['--no-sandbox'] : [];
    const child = spawn((electron as { binary: string }).binary, [ROOT, `--user-data-dir=${userData}`, '--hidden', ...rootOnly], { env: env() });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, output: () => output };
  }

  async function waitForUrl(output: () => string, exited: Promise<number | null>): Promise<string> {
    const deadline = Date.now() + 30_000;
    let done = false;
    void exited.then(() => (done = true));
    while (Date.now() < deadline && !done) {
      const url = /agents connect to (http:\/\/\S+\/mcp)/.exec(output())?.[1];
      if (url) return url;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`the app never reported its MCP URL:\n${output()}`);
  }

  before(async () => {
    if (skip) return;
    assert.ok(existsSync(MAIN), `${MAIN} is missing: run "npm run build" first`);
    userData = await mkdtemp(join(tmpdir(), 'pw-electron-userdata-'));
    stateDir = await mkdtemp(join(tmpdir(), 'pw-electron-state-'));
    workDir = await realpath(await mkdtemp(join(tmpdir(), 'pw-electron-cwd-')));
    // Any free port for the agent endpoint, so the test never meets a real app on 9100.
    await writeFile(join(userData, 'settings.json'), JSON.stringify({ startServerAtLaunch: true, port: 0 }));
  });

  after(async () => {
    if (skip) return;
    const keychain = new KeychainSecretStore({ service: KEYCHAIN_SERVICE });
    for (const account of await keychain.accounts('')) await keychain.delete(account);
    for (const dir of [userData, stateDir, workDir]) await rm(dir, { recursive: true, force: true });
  });

  it('starts the host at launch, keeps one instance, and quits cleanly on SIGTERM', { skip }, async () => {
    const created = spawnSync(process.execPath, [CLI, 'token', 'create', '--name', 'electron-e2e'], { env: env(), encoding: 'utf8' });
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim();

    const app = launch();
    try {
      const url = await waitForUrl(app.output, app.exited);
      const client = new Client({ name: 'electron-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['read', 'write', 'edit', 'bash', 'skill']) assert.ok(tools.includes(name), `${name} in ${tools.join(', ')}`);
      await client.close();

      // A second launch hands over to the first (which shows its window) and exits at once.
      const second = launch();
      assert.equal(await Promise.race([second.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]), 0, second.output());
      assert.equal(app.child.exitCode, null, 'the first instance keeps running');

      app.child.kill('SIGTERM');
      const code = await Promise.race([app.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
      assert.equal(code, 0, app.output());
      await assert.rejects(fetch(url, { method: 'POST' }), 'the agent endpoint is closed with the app');
    } finally {
      if (app.child.exitCode === null) app.child.kill('SIGKILL');
    }
  });
});
