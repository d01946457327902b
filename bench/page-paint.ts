/**
 * `npm run bench:page-paint`: the page's meaningful paint against a static page from the same
 * server, in Debian's headless Chromium, in the same run (issue 28: within 2x).
 *
 * - **The page**: the control plane's `/` (signed in with a login link), the Connections screen of
 *   "This machine": meaningful once the place's connections are shown (`p.rule`: in the HTML the
 *   host draws for the owner, or drawn by the page once it has them), at the first paint after that.
 * - **Static floor**: a plain HTML page with the same heading and rule, written into the built page's
 *   folder for the run (`dist/renderer/bench-static-<random>.html`, removed at the end) and served by
 *   the same control plane; its first paint of the same element.
 *
 * Both are timed from the navigation's start (`performance.timeOrigin`) to a frame callback after
 * the element is in the DOM and a task queued from it (which runs after that paint). Each round
 * loads both **cold** (the browser's cache emptied first) and **warm** (reloaded: hashed assets come
 * from the cache), in alternating order.
 *
 * Flags: --rounds N (default 10), --no-build (use dist/renderer as it is), --before DIR (a built
 * checkout of another commit: its host and page measured beside ours in the same run, in a browser
 * context of its own, as "before").
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../e2e/page/page-support.js';
import type { startHost } from '../test/support/host-fixture.js';
import { log, median } from './lib/util.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const ROUNDS = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 10;
const BEFORE = argv.includes('--before') ? resolve(argv[argv.indexOf('--before') + 1]!) : undefined;
const GOAL_RATIO = 2;
const SELECTOR = 'p.rule';

// In every document before anything else: the time of the first paint after SELECTOR appears.
const HARNESS = `
(() => {
  const done = () => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => (window.__meaningful = performance.now());
    channel.port2.postMessage(0);
  });
  const observer = new MutationObserver(() => {
    if (document.querySelector(${JSON.stringify(SELECTOR)})) { observer.disconnect(); done(); }
  });
  observer.observe(document, { childList: true, subtree: true });
})();
`;

const STATIC_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Persona Workspace</title></head>
<body><main><h1>Connections</h1><p class="muted">MCP servers the agents of This machine can use.</p>
<p class="rule">Connections added here are used by agents working in This machine.</p></main></body></html>
`;

async function paintOf(page: Page, url: string, cold: boolean): Promise<number> {
  if (cold) await (await page.context().newCDPSession(page)).send('Network.clearBrowserCache');
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as { __meaningful?: number }).__meaningful !== undefined, undefined, {
    timeout: 30_000,
  });
  return (await page.evaluate(() => (globalThis as unknown as { __meaningful: number }).__meaningful)) as number;
}

/** A host with the page signed in, in a browser context of its own (a session cookie is per host, not per port). */
async function signedIn(browser: Browser, fixture: string): Promise<{ page: Page; origin: string; close(): Promise<void> }> {
  const { startHost: start } = (await import(fixture)) as { startHost: typeof startHost };
  const fx = await start();
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  await context.addInitScript(HARNESS);
  const page = await context.newPage();
  // Signed in once: the login link sets the session cookie and sends the browser to the page.
  await page.goto(await fx.host.loginUrl());
  await page.locator(SELECTOR).waitFor();
  return { page, origin: new URL(page.url()).origin, close: () => fx.close() };
}

async function main(): Promise<void> {
  if (!argv.includes('--no-build')) {
    log('building (npm run build)');
    execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
  }
  const staticName = `bench-static-${randomBytes(6).toString('hex')}.html`;
  const staticPath = join(REPO, 'dist', 'renderer', staticName);
  await writeFile(staticPath, STATIC_PAGE);
  const browser = await launchChromium();
  const hosts: Array<{ close(): Promise<void> }> = [];
  const load = [loadavg()[0]!];
  try {
    const ours = await signedIn(browser, join(REPO, 'test', 'support', 'host-fixture.ts'));
    hosts.push(ours);
    const before = BEFORE ? await signedIn(browser, join(BEFORE, 'test', 'support', 'host-fixture.ts')) : undefined;
    if (before) hosts.push(before);
    const targets = {
      page: { page: ours.page, url: `${ours.origin}/` },
      static: { page: ours.page, url: `${ours.origin}/${staticName}` },
      ...(before && { before: { page: before.page, url: `${before.origin}/` } }),
    };
    const keys = Object.keys(targets) as Array<keyof typeof targets>;
    const times: Record<string, number[]> = Object.fromEntries(
      keys.flatMap((k) => [
        [`${k} cold`, []],
        [`${k} warm`, []],
      ]),
    );
    for (const key of keys) await paintOf(targets[key]!.page, targets[key]!.url, false); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      // Each target first, in the middle and last in turn.
      const order = keys.map((_, i) => keys[(i + round) % keys.length]!);
      for (const key of order) {
        const { page, url } = targets[key]!;
        times[`${key} cold`]!.push(await paintOf(page, url, true));
        times[`${key} warm`]!.push(await paintOf(page, url, false));
      }
      log(
        `round ${round + 1}/${ROUNDS}: ${Object.entries(times)
          .map(([k, v]) => `${k} ${v.at(-1)!.toFixed(0)}`)
          .join(', ')} ms`,
      );
    }
    load.push(loadavg()[0]!);
    const row = (k: string) => {
      const v = [...times[k]!].sort((a, b) => a - b);
      return `| ${k} | ${median(v).toFixed(0)} | ${v[0]!.toFixed(0)} | ${v.at(-1)!.toFixed(0)} |`;
    };
    const ratio = (k: string, state: string) => (median(times[`${k} ${state}`]!) / median(times[`static ${state}`]!)).toFixed(2);
    process.stdout.write(
      [
        `## Page paint (${new Date().toISOString()}, ${ROUNDS} rounds, load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} on 2 cores${BEFORE ? `; before: ${BEFORE}` : ''})`,
        '',
        '| navigation start -> meaningful paint | median ms | min ms | max ms |',
        '| --- | ---: | ---: | ---: |',
        ...Object.keys(times).map(row),
        '',
        `page / static: cold ${ratio('page', 'cold')}, warm ${ratio('page', 'warm')} (goal <= ${GOAL_RATIO})` +
          (before ? `; before / static: cold ${ratio('before', 'cold')}, warm ${ratio('before', 'warm')}` : ''),
        '',
      ].join('\n'),
    );
  } finally {
    await browser.close();
    for (const host of hosts) await host.close();
    await rm(staticPath, { force: true });
  }
}

await main();
