import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { enterWorkspace, freePort, startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';
import { SECTIONS, sectionOf, type SectionId } from '../../renderer/app/sections.js';
import { startUpstream, type UpstreamFixture } from '../fixtures/upstream-server.js';
import { launchChromium, pageLive, PAGE_WAIT_MS } from './page-support.js';

// Every screen of the page in the states a person meets, against one real host with something on
// each screen: a connection, skills, a token, tool calls (one failed). The layout and accessibility
// tests walk it, and so does `npm run screenshots`.

const API_KEY = 'sk-tour-9f1e2d3c';

export const SKILL_MD = `---
name: deploy
description: Deploy the app to staging, then to production, with the checks that must pass first.
---
# Deploy steps

| Step | Command | Who |
| --- | --- | --- |
| Build | \`npm run build\` | anyone |
| Ship | \`scripts/run.sh --production\` | the on-call person |

- [x] The build is green
- [ ] The changelog is written
`;

export interface Tour {
  fx: HostFixture;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  controlUrl: string;
  skillsDir: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

/** A screen in one state: `show` brings the page there from anywhere and waits until it is drawn. */
export interface TourStop {
  name: string;
  /** The section of the page's navigation it is on; none for the pages outside it (signed out, a sign-in's end). */
  section?: SectionId;
  show(page: Page, tour: Tour): Promise<void>;
}

export async function startTour(): Promise<Tour> {
  const workspace = await enterWorkspace('pw-tour-', ['Crew/alpha', 'Workflow/release-notes']);
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'pw-tour-skills-')));
  const skillsDir = join(dir, 'skills');
  const put = async (path: string, content: string) => {
    await mkdir(dirname(join(skillsDir, path)), { recursive: true });
    await writeFile(join(skillsDir, path), content);
  };
  await put('deploy/SKILL.md', SKILL_MD);
  await put('deploy/scripts/run.sh', 'echo deploy\n');
  await put('pdf-tools/SKILL.md', '---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\nUse pdftk.\n');
  await put('broken/SKILL.md', '---\nname: other\ndescription: Misnamed.\n---\n');

  const upstream: UpstreamFixture = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: API_KEY } });
  // The registry is unreachable, as on any offline machine: a closed port.
  const registryPort = await freePort();
  const fx = await startHost(
    { port: await freePort() },
    {
      WORKSPACE_SKILLS_DIR: skillsDir,
      WORKSPACE_REGISTRY_URL: `http://127.0.0.1:${registryPort}/v0/servers`,
      WORKSPACE_ALLOW_PRIVATE_NETWORK: '1',
      WORKSPACE_SECRET_STORE: 'file',
    },
  );
  const controlUrl = await fx.host.open();
  const adminToken = await fx.host.adminToken();
  const api = (method: string, path: string, body?: unknown) => callApi(controlUrl, adminToken, method, path, body);

  const secret = await api('PUT', '/secrets/ISSUES_KEY?workspace_path=', { value: API_KEY });
  if (secret.status !== 204) throw new Error(`making the tour's secret: ${secret.status}`);
  const added = await api('POST', '/mcp/place', {
    server: { url: upstream.url, name: 'Issue tracker', header: { name: 'X-Api-Key', secret: 'ISSUES_KEY' } },
  });
  if (added.status !== 201) throw new Error(`adding the tour's connection: ${JSON.stringify(added.json)}`);
  const token = await api('POST', '/tokens', { name: 'release agent', workspace_path: 'Crew/alpha' });
  const { client } = await fx.connect(token.json.token.token);
  await client.callTool({ name: 'bash', arguments: { command: 'true' } });
  await client.callTool({ name: 'read', arguments: { path: 'notes/a-file-that-is-not-there-with-a-long-name.md' } });
  await client.close();

  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  await page.goto(await fx.host.loginUrl());
  return {
    fx,
    browser,
    context,
    page,
    controlUrl,
    skillsDir,
    api,
    close: async () => {
      await browser.close();
      await fx.close();
      await upstream.close();
      await rm(dir, { recursive: true, force: true });
      await workspace.leave();
    },
  };
}

const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 }).waitFor();

/**
 * Opens a section as the rail's links do, by the address's hash in the page already live: the
 * section shown before goes, and this one is drawn afresh (0.1 s of CPU, against 0.6 s for a load
 * and 0.3 s to inject axe-core again). On the section it shows already, which would keep what is
 * open or typed there, it goes through another first; with no live page, it loads the page.
 */
async function openSection(page: Page, tour: Tour, hash: string, title: string): Promise<void> {
  const here = new URL(page.url());
  const live =
    here.origin === new URL(tour.controlUrl).origin && here.pathname === '/' && (await page.locator('html[data-live]').count()) > 0;
  const section = sectionOf(`#${hash}`);
  if (live && sectionOf(here.hash) === section) {
    const other = SECTIONS.find((s) => s.id !== section)!;
    await page.goto(`${tour.controlUrl}/#${other.id}`);
    await heading(page, other.label);
  }
  await page.goto(`${tour.controlUrl}/#${hash}`);
  if (!live) await page.reload(); // a hash-only change does not load the page again
  await pageLive(page);
  await heading(page, title);
}

/** The screens and their states, signed in. */
export const SIGNED_IN_STOPS: TourStop[] = [
  {
    name: 'connections',
    section: 'connections',
    show: async (page, tour) => {
      await openSection(page, tour, 'connections', 'Connections');
      await page.getByRole('region', { name: 'Connected' }).getByText('Issue tracker').waitFor();
      // The first connector listed: a narrow screen shows only the first few until "Show all".
      await page.getByRole('region', { name: 'Available' }).getByRole('button', { name: 'Connect Linear' }).waitFor();
    },
  },
  {
    name: 'connections-add-server',
    section: 'connections',
    show: async (page, tour) => {
      await SIGNED_IN_STOPS[0]!.show(page, tour);
      await page.getByText('Add a server that is not listed').click();
      await page.getByRole('form', { name: 'Add a server that is not listed' }).waitFor();
    },
  },
  {
    name: 'skills',
    section: 'skills',
    show: async (page, tour) => {
      await openSection(page, tour, 'skills', 'Skills');
      await page.getByRole('region', { name: 'Installed' }).getByText('deploy', { exact: true }).waitFor();
    },
  },
  {
    name: 'skill',
    section: 'skills',
    show: async (page, tour) => {
      await SIGNED_IN_STOPS[2]!.show(page, tour);
      await page.getByRole('button', { name: 'View deploy' }).click();
      await page.getByRole('heading', { name: 'deploy', level: 2 }).waitFor();
    },
  },
  {
    name: 'skill-edit',
    section: 'skills',
    show: async (page, tour) => {
      await SIGNED_IN_STOPS[3]!.show(page, tour);
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await page.getByRole('textbox', { name: 'SKILL.md' }).waitFor();
    },
  },
  {
    name: 'access',
    section: 'access',
    show: async (page, tour) => {
      await openSection(page, tour, 'access', 'Agent access');
      await page.getByText('release agent').first().waitFor();
    },
  },
  {
    name: 'server',
    section: 'server',
    show: async (page, tour) => {
      await openSection(page, tour, 'server', 'Server');
      await page.getByRole('region', { name: 'Recent activity' }).getByText('bash', { exact: true }).waitFor();
    },
  },
];

/** The pages a person meets without being signed in: the page itself, and a sign-in's end in the browser. */
export const SIGNED_OUT_STOPS: TourStop[] = [
  {
    name: 'signed-out',
    show: async (page, tour) => {
      await page.goto(`${tour.controlUrl}/#connections`);
      await heading(page, 'Signed out');
    },
  },
  {
    name: 'oauth-callback',
    show: async (page, tour) => {
      await page.goto(`${tour.controlUrl}/oauth/callback?state=unknown&code=x`);
      await heading(page, 'Sign-in failed');
    },
  },
];

/** A page in a new context, without the login cookie. */
export async function signedOutPage(
  tour: Tour,
  viewport: { width: number; height: number },
): Promise<{ page: Page; close(): Promise<void> }> {
  const context = await tour.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_WAIT_MS);
  return { page, close: () => context.close() };
}
