import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, launchChromium } from '../../test/support/chromium.js';
import { enterWorkspace, freePort, startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';

/**
 * How long a page test waits for what it expects to see. Only a failing test waits it out; a run
 * that keeps both cores busy (several test files, the browser, their servers) has held a screen
 * back for over ten seconds, so the waits leave room for that.
 */
export const PAGE_WAIT_MS = 30_000;

// What the Agent access and Server page tests share: Debian's Chromium against a real headless
// host on a fixed port (so its MCP URL stays the same across Stop and Start), in a workspace with a place.

export { launchChromium };
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PAGE_BUILT = existsSync(join(ROOT, 'dist', 'renderer', 'index.html'));
const OUT = join(ROOT, 'e2e', 'out');

export const skipReason: string | false = !existsSync(CHROMIUM)
  ? `${CHROMIUM} is missing (apt-get install chromium)`
  : !PAGE_BUILT
    ? 'the page is not built (npm run build)'
    : false;

export interface PageFixture {
  fx: HostFixture;
  port: number;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The control plane's origin (the page and /api). */
  controlUrl: string;
  /** Calls the page's API as the person running the app. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A host in a fresh workspace with `Crew/alpha`, and a signed-in page on `#<section>` that may use the clipboard. */
export async function openPage(section: 'access' | 'server', heading: string): Promise<PageFixture> {
  const workspace = await enterWorkspace(`pw-page-${section}-`, ['Crew/alpha']);
  const port = await freePort();
  const fx = await startHost({ port }, { WORKSPACE_SECRET_STORE: 'file' });
  const controlUrl = await fx.host.open();
  const adminToken = await fx.host.adminToken();
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  await page.goto(await fx.host.loginUrl());
  await page.goto(`${controlUrl}/#${section}`);
  await pageLive(page);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  return {
    fx,
    port,
    browser,
    context,
    page,
    controlUrl,
    api: (method, path, body) => callApi(controlUrl, adminToken, method, path, body),
    shot: (name) => screenshot(page, `page-${section}-${name}`),
    close: async () => {
      await browser.close();
      await fx.close();
      await workspace.leave();
    },
  };
}

/**
 * Waits until the page is live: React has taken over what the host drew (renderer/app/Page.tsx says
 * so on <html>). The host's HTML shows the Connections screen before any script runs, so a heading
 * seen is no sign of it, and a click or a choice made before may be lost. After every load.
 */
export async function pageLive(page: Page): Promise<void> {
  await page.locator('html[data-live]').waitFor({ state: 'attached' });
}

/**
 * Saves a full-page screenshot of `page` as e2e/out/<name>.png, for a person to look at, when
 * PAGE_SCREENSHOTS=1. No test reads them, and each costs about 0.35 s of CPU (some 90 in a run).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.PAGE_SCREENSHOTS !== '1') return;
  await mkdir(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** Presses Tab (or Shift+Tab backwards) until `check` (a page expression) is true. */
export async function tabUntil(page: Page, check: string, max: number, backwards = false): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate(check)) return;
    await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached: ${check}`);
}

/**
 * Waits until a page expression is true. It asks from here, not with page.waitForFunction, whose
 * polling evaluates strings inside the page, which the page's CSP (no 'unsafe-eval') refuses.
 */
export async function pageUntil(page: Page, expression: string, timeoutMs = PAGE_WAIT_MS): Promise<void> {
  await waitFor(() => page.evaluate(expression), timeoutMs, `the page to have: ${expression}`);
}

/** What the page's clipboard holds now. */
export function clipboardText(page: Page): Promise<string> {
  return page.evaluate(`navigator.clipboard.readText()`) as Promise<string>;
}
