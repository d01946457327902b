import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { _electron, type ElectronApplication } from 'playwright-core';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';
import { waitFor } from '../test/support/host-fixture.js';

// The desktop app launched for real with Playwright's Electron driver: Electron on the built app
// (package.json's main, dist/main/electron/main.js). Where no Electron binary can run (its download
// is blocked on the build machines) the whole suite is skipped, saying why; it never passes without
// launching. The tray's menu cannot be read from outside the app (Electron has no getter for it):
// its model is a pure function, unit-tested in main/electron/tray-menu.test.ts.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'main', 'electron', 'main.js');
const CLI = join(ROOT, 'dist', 'main', 'cli.js');
const PRELOAD = join(ROOT, 'dist', 'preload', 'index.cjs');
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
    return {
      skip: `Electron binary not installed here: the electron package has no binary path (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    };
  }
  if (!existsSync(binary)) return { skip: `Electron binary not installed here: ${binary} does not exist` };
  const version = spawnSync(binary, ['--version'], {
    timeout: 10_000,
    encoding: 'utf8',
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '' },
  });
  if (version.error || version.status !== 0) {
    return {
      skip: `Electron binary not installed here: ${binary} --version failed (${version.error?.message ?? `exit ${version.status}: ${version.stderr.trim()}`})`,
    };
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
  // Chromium refuses to run as root with its sandbox on (containers, CI).
  const rootOnly = process.getuid?.() === 0 ? ['--no-sandbox'] : [];

  function env(): Record<string, string> {
    return {
      ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
      ELECTRON_RUN_AS_NODE: '',
      WORKSPACE_STATE_DIR: stateDir,
      WORKSPACE_CWD: workDir,
      WORKSPACE_CONTROL_PORT: '0',
      WORKSPACE_REGISTRY_URL: '',
      WORKSPACE_KEYCHAIN_SERVICE: KEYCHAIN_SERVICE,
    };
  }

  /** The app through Playwright's Electron driver; its output is kept to find the MCP URL it prints. */
  async function launch(options: { hidden: boolean }): Promise<{ app: ElectronApplication; output: () => string }> {
    const app = await _electron.launch({
      executablePath: (electron as { binary: string }).binary,
      args: [ROOT, `--user-data-dir=${userData}`, ...(options.hidden ? ['--hidden'] : []), ...rootOnly],
      env: env(),
    });
    let output = '';
    app
      .process()
      .stdout?.setEncoding('utf8')
      .on('data', (d: string) => (output += d));
    app
      .process()
      .stderr?.setEncoding('utf8')
      .on('data', (d: string) => (output += d));
    return { app, output: () => output };
  }

  async function waitForUrl(output: () => string): Promise<string> {
    return waitFor(() => /agents connect to (http:\/\/\S+\/mcp)/.exec(output())?.[1], 30_000, 'the app to report its MCP URL').catch(
      (error: Error) => assert.fail(`${error.message}:\n${output()}`),
    );
  }

  /** A second launch of the app, as a person double-clicking it again: it hands over and exits. */
  function secondLaunch(): Promise<number | null | 'still running'> {
    const child = spawn((electron as { binary: string }).binary, [ROOT, `--user-data-dir=${userData}`, ...rootOnly], {
      env: env(),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return Promise.race([
      exited,
      new Promise<'still running'>((resolve) => setTimeout(() => (child.kill('SIGKILL'), resolve('still running')), 15_000)),
    ]);
  }

  const windows = (app: ElectronApplication) =>
    app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().map((w) => ({ visible: w.isVisible(), destroyed: w.isDestroyed() })));

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

  it('starts the host at launch, keeps one instance, and stops the host when it quits', { skip }, async () => {
    const created = spawnSync(process.execPath, [CLI, 'token', 'create', '--name', 'electron-e2e'], { env: env(), encoding: 'utf8' });
    assert.equal(created.status, 0, created.stderr);
    const token = created.stdout.trim();

    const { app, output } = await launch({ hidden: true });
    try {
      const url = await waitForUrl(output);
      const client = new Client({ name: 'electron-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
      );
      const tools = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ['read', 'write', 'edit', 'bash', 'skill']) assert.ok(tools.includes(name), `${name} in ${tools.join(', ')}`);
      await client.close();

      // Started hidden (as at login): no window until asked for. A second launch hands over to
      // this one, which opens its window, and exits at once.
      assert.deepEqual(await windows(app), []);
      assert.equal(await secondLaunch(), 0);
      const page = await app.firstWindow();
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor({ timeout: 15_000 });
      assert.deepEqual(await windows(app), [{ visible: true, destroyed: false }]);

      // Quit from the page (the preload's quit, as the app menu's Quit): the host stops with the app.
      const closed = app.waitForEvent('close');
      await page
        .evaluate(() => (globalThis as unknown as { personaDesktop: { quit(): Promise<void> } }).personaDesktop.quit())
        .catch(() => {});
      await closed;
      await assert.rejects(fetch(url, { method: 'POST' }), 'the agent endpoint is closed with the app');
    } finally {
      await app.close().catch(() => {});
    }
  });

  it('hides the window to the tray on close, says so the first time, and a second launch shows it again', { skip }, async () => {
    const { app } = await launch({ hidden: false });
    try {
      const page = await app.firstWindow();
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor({ timeout: 15_000 });
      await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]!.close());
      assert.deepEqual(await windows(app), [{ visible: false, destroyed: false }], 'hidden, not closed');
      assert.equal(app.process().exitCode, null, 'the app keeps running in the tray');
      // The first hide says so once, and the settings file remembers it beside what was there.
      const settings = async () => JSON.parse(await readFile(join(userData, 'settings.json'), 'utf8')) as Record<string, unknown>;
      await waitFor(async () => (await settings()).trayHintShown === true, 10_000, 'trayHintShown in settings.json');
      assert.deepEqual(await settings(), { startServerAtLaunch: true, port: 0, trayHintShown: true });
      assert.equal(await secondLaunch(), 0);
      assert.deepEqual(await windows(app), [{ visible: true, destroyed: false }]);
    } finally {
      await app.close().catch(() => {});
    }
  });

  it("lets the page's Copy buttons write the clipboard (the permission its own page gets)", { skip }, async () => {
    const { app, output } = await launch({ hidden: false });
    try {
      const url = await waitForUrl(output);
      const page = await app.firstWindow();
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor({ timeout: 15_000 });
      await page.evaluate(`location.hash = 'access'`);
      await page.getByRole('heading', { name: 'Agent access', level: 1 }).waitFor({ timeout: 15_000 });
      await page.getByRole('button', { name: 'Copy the MCP URL' }).click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor({ timeout: 5_000 });
      assert.equal(await app.evaluate(({ clipboard }) => clipboard.readText()), url);
    } finally {
      await app.close().catch(() => {});
    }
  });

  it('answers the preload only in its own window', { skip }, async () => {
    const { app } = await launch({ hidden: false });
    try {
      const page = await app.firstWindow();
      await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor({ timeout: 15_000 });
      const own = await page.evaluate(() =>
        (globalThis as unknown as { personaDesktop: { config(): Promise<{ apiBase: string }> } }).personaDesktop
          .config()
          .then((c) => c.apiBase),
      );
      assert.match(own, /^http:\/\/127\.0\.0\.1:\d+$/);
      // Another window with the same preload (as a page that got hold of it would be) is refused.
      const foreign = await app.evaluate(async ({ BrowserWindow }, preload) => {
        const win = new BrowserWindow({
          show: false,
          webPreferences: { preload, sandbox: true, contextIsolation: true, nodeIntegration: false },
        });
        try {
          await win.loadURL('data:text/html,<p>not the app</p>');
          return (await win.webContents.executeJavaScript(
            `window.personaDesktop.config().then(() => 'answered', (e) => 'refused: ' + e.message)`,
          )) as string;
        } finally {
          win.destroy();
        }
      }, PRELOAD);
      assert.match(foreign, /^refused: .*only available to the app's own window/);
    } finally {
      await app.close().catch(() => {});
    }
  });
});
