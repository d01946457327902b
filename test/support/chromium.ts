import { chromium, type Browser, type BrowserServer } from 'playwright-core';

/** Debian's Chromium, which every page test drives. */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Where the test run's shared Chromium listens (a Playwright WebSocket endpoint), set by
 * scripts/run-tests.ts for the test files it runs when more than one of them uses a browser.
 */
export const SHARED_BROWSER_ENV = 'PERSONA_TEST_BROWSER';

const LAUNCH = {
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

/**
 * Debian's Chromium, headless, as every page test runs it: the run's shared one where there is one
 * (starting a Chromium costs about 3 s of CPU, each of a dozen files paid it), else one of the
 * file's own. Each file still gets contexts of its own (cookies, storage, permissions), and
 * closing the shared one closes what this file opened in it and disconnects.
 */
export function launchChromium(): Promise<Browser> {
  const shared = process.env[SHARED_BROWSER_ENV];
  return shared ? chromium.connect(shared) : chromium.launch(LAUNCH);
}

/** The run's shared Chromium, for scripts/run-tests.ts to name in SHARED_BROWSER_ENV and close at the end. */
export function launchSharedChromium(): Promise<BrowserServer> {
  return chromium.launchServer(LAUNCH);
}
