import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, Route } from 'playwright-core';
import { firstScreen } from '../../common/api/first-screen.js';
import { callApi } from '../../test/support/control-api.js';
import { enterWorkspace, startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { cliSandbox } from '../fixtures/cli-process.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';
import { launchChromium, skipReason } from './page-support.js';

// The first screen without waiting for the API: the signed-in owner's index carries the places and
// This machine's connections (as the API answers them, escaped for the script element it is in),
// and the screen itself, drawn by the page's components from that data on the host, so the browser
// paints it before any script runs and the script takes it over (hydrates it); nobody else's index
// has either; and what the index does not carry is asked for at once, in parallel.

/** A place whose label would end the data's element or open a comment in it, were it not escaped. */
const ODD = 'Workflow/<!--<script>x';
/** A connection's name that would be an element, and a replacement pattern, were it not text. */
const HOSTILE = '<img src=x onerror="document.title=1"> $& $\' Notes';
const DATA = /<script type="application\/json" id="first-screen">([^<]*)<\/script>/;
const DRAWN = /<div id="root">(.+?)<\/div>\s*<script type="application\/json"/s;

describe('the first screen', { skip: skipReason }, () => {
  let workspace: { leave(): Promise<void> };
  let upstream: UpstreamFixture;
  let fx: HostFixture;
  let browser: Browser;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown) => callApi(controlUrl, adminToken, method, path, body);

  before(async () => {
    workspace = await enterWorkspace('pw-first-screen-', ['Crew/alpha', ODD]);
    upstream = await startUpstream({ name: 'notes' });
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    const added = await api('POST', '/mcp/place', { workspace_path: '', server: { url: upstream.url, name: HOSTILE } });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    // Checked once: its row stays as it is while the tests compare the index with the API.
    await waitFor(
      async () => (await api('GET', '/mcp/place?workspace_path=')).json.connections[0]?.state === 'connected',
      10_000,
      'the connection checked',
    );
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await fx?.close();
    await upstream?.close();
    await workspace?.leave();
  });

  /** What the page said on its console that a person would not want to see there: errors, warnings, uncaught exceptions. */
  function complaintsOf(page: Page): string[] {
    const said: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning')
        said.push(`${message.type()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => said.push(`uncaught: ${error.message}`));
    return said;
  }

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
    const connections = (await api('GET', '/mcp/place?workspace_path=')).json;
    assert.deepEqual(carried, { places: (await api('GET', '/places')).json, connections });
    // The screen drawn from it: the rule, the picker with every place, the connection's row; what
    // came from outside only as text, escaped by React.
    const drawn = DRAWN.exec(html)?.[1];
    assert.ok(drawn, html);
    assert.ok(drawn.includes(`<p class="rule">${connections.rule}</p>`), drawn);
    assert.ok(drawn.includes('<option value="Workflow/&lt;!--&lt;script&gt;x">Workflow &lt;!--&lt;script&gt;x</option>'), drawn);
    assert.ok(
      drawn.includes('<span class="name">&lt;img src=x onerror=&quot;document.title=1&quot;&gt; $&amp; $&#x27; Notes</span>'),
      drawn,
    );
    assert.ok(!/<img|<script|<!--</.test(drawn), drawn);
    assert.deepEqual(
      fx.logs.filter((line) => line.includes('first screen')),
      [],
    );
  });

  it('is in the index for the signed-in owner only', async () => {
    const owner = await (await fetch(`${controlUrl}/`, { headers: { Cookie: await sessionCookie() } })).text();
    assert.ok(DRAWN.test(owner) && owner.includes('<p class="rule">'), owner);
    for (const headers of [{}, { Cookie: 'pw_session=not-a-session' }]) {
      const response = await fetch(`${controlUrl}/`, { headers });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-cache');
      const html = await response.text();
      assert.ok(html.includes('<div id="root"></div>') && !html.includes('first-screen') && !html.includes('class="rule"'), html);
    }
  });

  it('is painted with no script run at all', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(await fx.host.loginUrl());
      await page.locator('p.rule').waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Connections', level: 1 }).count(), 1);
      const picker = page.getByRole('combobox', { name: 'Place' });
      assert.deepEqual(await picker.locator('option').allTextContents(), ['This machine', 'Crew alpha', 'Workflow <!--<script>x']);
      // The connection's row, its name as text; nothing of it became an element.
      const row = page.getByRole('listitem', { name: HOSTILE });
      assert.equal(await row.locator('.name').textContent(), HOSTILE);
      assert.equal(await row.locator('.state').textContent(), 'Connected');
      assert.equal(await page.locator('img').count(), 0);
    } finally {
      await context.close();
    }
  });

  it('is taken over by the script where it stands: no mismatch, nothing said on the console, and it works', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const complaints = complaintsOf(page);
    try {
      await page.goto(await fx.host.loginUrl());
      await page.locator('p.rule').waitFor();
      const held = await loadWithScriptsHeld(page, `${controlUrl}/`);
      await page.locator('p.rule').waitFor();
      await page.evaluate(`window.drawnByHost = document.querySelector('p.rule')`);
      held.release();
      // Live once it asked for what the index does not carry (the connectors): the rule the host drew
      // is the one React kept, and the row's buttons and the picker work.
      await page.getByText('Loading connectors…').waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(`document.querySelector('p.rule') === window.drawnByHost`), true);
      await page.getByRole('button', { name: `Show the details of ${HOSTILE}` }).click();
      await page.getByRole('button', { name: `Hide the details of ${HOSTILE}` }).waitFor();
      await page.getByRole('combobox', { name: 'Place' }).selectOption('Crew/alpha');
      await page.getByText('this crew', { exact: false }).first().waitFor();

      // What only the browser knows: the remembered place (Crew/alpha, chosen above), a narrow window,
      // the address's section. The host draws This machine, wide, on Connections; the page moves once it is live.
      await page.reload();
      await page.getByText('this crew', { exact: false }).first().waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Place' }).inputValue(), 'Crew/alpha');
      await page.setViewportSize({ width: 400, height: 800 });
      await page.goto(`${controlUrl}/#skills`);
      await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
      assert.equal(await page.title(), 'Persona Workspace');
      assert.deepEqual(complaints, []);
    } finally {
      await context.close();
    }
  });

  it('takes a place picked and a search typed before the page is live as picked and typed', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const complaints = complaintsOf(page);
    try {
      await page.goto(await fx.host.loginUrl());
      await page.locator('p.rule').waitFor();
      const held = await loadWithScriptsHeld(page, `${controlUrl}/`);
      // Picked in the host's HTML, while no script of the page has run.
      await page.getByRole('combobox', { name: 'Place' }).selectOption(ODD);
      held.release();
      await page.getByText('MCP servers the agents of Workflow <!--<script>x can use.').waitFor();
      assert.equal(await page.getByRole('combobox', { name: 'Place' }).inputValue(), ODD);
      // Back to This machine (remembered for the next load), then the same for the search.
      await page.getByRole('combobox', { name: 'Place' }).selectOption('');
      await page.getByRole('listitem', { name: HOSTILE }).waitFor();
      const again = await loadWithScriptsHeld(page, `${controlUrl}/`);
      await page.getByRole('searchbox', { name: 'Search connectors' }).fill('deepwiki');
      again.release();
      await page.getByRole('button', { name: 'Connect DeepWiki' }).waitFor();
      assert.equal(await page.getByRole('searchbox', { name: 'Search connectors' }).inputValue(), 'deepwiki');
      assert.equal(await page.getByRole('button', { name: 'Connect Linear' }).count(), 0);
      assert.deepEqual(complaints, []);
    } finally {
      await context.close();
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

describe('the first screen when the host cannot draw it', { skip: skipReason }, () => {
  let app: string;

  before(async () => {
    // The built program and page as installed, without the render of the first screen.
    app = await mkdtemp(join(tmpdir(), 'pw-no-render-'));
    await cp(fileURLToPath(new URL('../../dist', import.meta.url)), join(app, 'dist'), { recursive: true });
    await rm(join(app, 'dist', 'server-render'), { recursive: true });
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'persona-mcp-workspace', version: '0.0.0', type: 'module' }));
  });
  after(() => rm(app, { recursive: true, force: true }));

  it("serves the owner's index with the data only, and says why in the log", async () => {
    const cli = cliSandbox('pw-no-render-cli-', join(app, 'dist', 'main', 'cli.js'));
    const server = await cli.serve();
    try {
      const link = /(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)\n/.exec(server.stdout())![1]!;
      const login = await fetch(link, { redirect: 'manual' });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const index = await fetch(new URL('/', link), { headers: { Cookie: cookie } });
      assert.equal(index.status, 200);
      assert.equal(index.headers.get('cache-control'), 'no-store');
      const html = await index.text();
      assert.ok(html.includes('<div id="root"></div>') && DATA.test(html), html);
      const said = server.stdout() + server.stderr();
      assert.match(said, /The page's first screen is not drawn on the server: its render did not load \(.*first-screen\.js/);
      // The session (a secret) is nowhere in what it said.
      assert.ok(!said.includes(cookie.split('=')[1]!), said);
    } finally {
      await server.stop();
      await cli.remove();
    }
  });
});

/** Loads `url` in `page` with every request for the page's scripts held until `release`: what shows is the host's HTML. */
async function loadWithScriptsHeld(page: Page, url: string): Promise<{ release(): void }> {
  const context = page.context();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = async (route: Route) => {
    await released;
    await route.continue().catch(() => {});
  };
  await context.route(/\/assets\/.*\.js$/, hold);
  await page.goto(url, { waitUntil: 'commit' });
  return {
    release: () => {
      release();
      void context.unroute(/\/assets\/.*\.js$/, hold);
    },
  };
}

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
