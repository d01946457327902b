import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Route } from 'playwright-core';
import { firstScreen } from '../../common/api/first-screen.js';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { launchChromium, skipReason } from './page-support.js';

// The first screen without waiting for the API: the signed-in owner's index carries the places and
// This machine's connections (as the API answers them, escaped for the script element it is in),
// nobody else's does; and what the index does not carry is asked for at once, in parallel.

/** A place whose label would end the data's element or open a comment in it, were it not escaped. */
const ODD = 'Workflow/<!--<script>x';
const DATA = /<script type="application\/json" id="first-screen">([^<]*)<\/script>/;

describe('the first screen', { skip: skipReason }, () => {
  let workspace: { leave(): Promise<void> };
  let fx: HostFixture;
  let browser: Browser;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string) => callApi(controlUrl, adminToken, method, path);

  before(async () => {
    workspace = await enterWorkspace('pw-first-screen-', ['Crew/alpha', ODD]);
    fx = await startHost();
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await workspace?.leave();
  });

  /** A login link's session cookie, as the browser keeps it. */
  async function sessionCookie(): Promise<string> {
    const login = await fetch(await fx.host.loginUrl(), { redirect: 'manual' });
    return login.headers.get('set-cookie')!.split(';')[0]!;
  }

  it("is in the signed-in owner's index as the API answers it, escaped, and never stored", async () => {
    const response = await fetch(`${controlUrl}/`, { headers: { Cookie: await sessionCookie() } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const html = await response.text();
    const text = DATA.exec(html)?.[1];
    assert.ok(text, html);
    assert.ok(!text.includes('<') && text.includes('\\u003c!--\\u003cscript>x'), text);
    const carried = firstScreen.parse(JSON.parse(text));
    assert.ok(carried.places.places.some((p) => p.root === ODD));
    assert.deepEqual(carried, {
      places: (await api('GET', '/places')).json,
      connections: (await api('GET', '/mcp/place?workspace_path=')).json,
    });
  });

  it('is not in the index for anyone not signed in', async () => {
    for (const headers of [{}, { Cookie: 'pw_session=not-a-session' }]) {
      const response = await fetch(`${controlUrl}/`, { headers });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      const html = await response.text();
      assert.ok(html.includes('<div id="root">') && !html.includes('first-screen'), html);
    }
  });

  it('is drawn from the index, with no answer of the API yet; a remembered place is asked for at once', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(await fx.host.loginUrl());
      await page.locator('p.rule').waitFor();
      const held = await holdFirstRequests(page.context());
      await page.reload();
      // The place picker and This machine's rule, while every request for them waits.
      await page.locator('p.rule').waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Connections', level: 1 }).count(), 1);
      const picker = page.getByRole('combobox', { name: 'Place' });
      assert.ok((await picker.locator('option').allTextContents()).includes('Workflow <!--<script>x'));
      held.release();

      // Remembered: a place the index does not carry; its connections are asked for without waiting for the places.
      await picker.selectOption('Crew/alpha');
      await page.getByText('this crew', { exact: false }).first().waitFor();
      const again = await holdFirstRequests(page.context());
      await page.reload();
      await waitFor(
        async () => again.seen.some((path) => path === '/api/mcp/place?workspace_path=Crew%2Falpha'),
        10_000,
        'the remembered place',
      );
      again.release();
      await page.getByText('this crew', { exact: false }).first().waitFor();
    } finally {
      await context.close();
    }
  });

  it('without it (the desktop window), asks for the places and the remembered place together', async () => {
    const context = await browser.newContext();
    // The desktop shell's preload: the API by its base URL and the admin token, no cookie (and so no data in the index).
    await context.addInitScript(
      ({ base, token }) => {
        // A page expression: the test's types have no DOM.
        const page = globalThis as unknown as { localStorage: { setItem(k: string, v: string): void }; personaDesktop: unknown };
        page.localStorage.setItem('persona.place', 'Crew/alpha');
        page.personaDesktop = {
          config: async () => ({ apiBase: base, adminToken: token }),
          openExternal: async () => {},
        };
      },
      { base: controlUrl, token: adminToken },
    );
    const page = await context.newPage();
    try {
      const held = await holdFirstRequests(context);
      await page.goto(`${controlUrl}/`);
      // Both asked for while neither has been answered: in parallel, not one after the other.
      await waitFor(
        async () => held.seen.includes('/api/places') && held.seen.includes('/api/mcp/place?workspace_path=Crew%2Falpha'),
        10_000,
        'both requests',
      );
      held.release();
      await page.getByText('this crew', { exact: false }).first().waitFor();
      await page.locator('p.rule').waitFor();
    } finally {
      await context.close();
    }
  });
});

/** Holds every request for the places or a place's connections until `release`; `seen`: their paths, in order. */
async function holdFirstRequests(context: import('playwright-core').BrowserContext): Promise<{ seen: string[]; release(): void }> {
  const seen: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = async (route: Route) => {
    const url = new URL(route.request().url());
    seen.push(url.pathname + url.search);
    await released;
    // A request the page dropped meanwhile (a reload) is gone.
    await route.continue().catch(() => {});
  };
  await context.route(/\/api\/(places|mcp\/place)(\?|$)/, hold);
  return {
    seen,
    release: () => {
      release();
      void context.unroute(/\/api\/(places|mcp\/place)(\?|$)/, hold);
    },
  };
}
