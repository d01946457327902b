import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { skipReason } from '../e2e/page/page-support.js';
import { HEIGHT_OF, SCREENSHOT_DIR, screenshotPlan, type Shot } from '../e2e/page/screenshot-plan.js';
import { signedOutPage, startTour } from '../e2e/page/tour.js';

// `npm run screenshots`: walks the tour (a real headless host with places, a connection to a real
// loopback MCP server, skills, a token and tool calls) in Debian's Chromium and writes every screen
// at 1280, 800 and 360 px, light and dark, to docs/screenshots/.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, SCREENSHOT_DIR);

async function take(page: Page, shot: Shot, tour: Awaited<ReturnType<typeof startTour>>): Promise<void> {
  await page.setViewportSize({ width: shot.width, height: HEIGHT_OF[shot.width] });
  await page.emulateMedia({ colorScheme: shot.theme, reducedMotion: 'reduce' });
  await shot.stop.show(page, tour);
  // The page as a person sees it: no text caret blinking into one shot and not the next.
  await page.screenshot({ path: join(OUT, shot.file), caret: 'hide', animations: 'disabled' });
}

async function main(): Promise<void> {
  if (skipReason) throw new Error(`Cannot take the screenshots: ${skipReason}.`);
  const plan = screenshotPlan();
  // A screen renamed or gone leaves no stale picture behind.
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const tour = await startTour();
  try {
    for (const shot of plan.filter((s) => s.signedIn)) await take(tour.page, shot, tour);
    const out = await signedOutPage(tour, { width: 1280, height: 800 });
    try {
      for (const shot of plan.filter((s) => !s.signedIn)) await take(out.page, shot, tour);
    } finally {
      await out.close();
    }
  } finally {
    await tour.close();
  }
  let bytes = 0;
  for (const file of await readdir(OUT)) bytes += (await stat(join(OUT, file))).size;
  process.stdout.write(`${plan.length} screenshots in ${SCREENSHOT_DIR}/ (${Math.round(bytes / 1024)} KiB)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
