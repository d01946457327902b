import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { pageLive, pageUntil, skipReason } from './page-support.js';
import { SIGNED_IN_STOPS, signedOutPage, SIGNED_OUT_STOPS, startTour, type Tour, type TourStop } from './tour.js';

// axe-core on every screen and state of the page, light and dark, wide and narrow: no violation of
// any impact. Every page has one main landmark and a level-one heading.

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: Array<{ target: string[]; failureSummary: string }>;
}

/** axe-core's violations on the page as it is now, each in one line; with the rule (experimental in axe) that a control's name contains its visible text. */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(`typeof window.axe === 'object'`))) await page.evaluate(await AXE_SOURCE); // as DevTools runs it: the page's CSP allows no inline script
  const found = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'], rules: { 'label-content-name-mismatch': { enabled: true } } }).then((r) => r.violations)`,
  )) as Violation[];
  return found.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => `${n.target.join(' ')} (${n.failureSummary.replace(/\s+/g, ' ')})`).join('; ')}`,
  );
}

async function landmarks(page: Page): Promise<{ mains: number; h1: number }> {
  return { mains: await page.getByRole('main').count(), h1: await page.getByRole('heading', { level: 1 }).count() };
}

// One tour (a host, its data and a browser) for both suites: the keyboard's starts from the viewport and colours it sets.
describe('the page: accessibility and keyboard, on one tour', { skip: skipReason }, () => {
  let tour: Tour;
  before(async () => {
    tour = await startTour();
  });
  after(() => tour?.close());

  describe('the page: accessibility (axe-core)', () => {
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [1280, 360]) {
        it(`has no violations on any screen, ${scheme}, at ${width} px`, async () => {
          const check = async (page: Page, stop: TourStop) => {
            await stop.show(page, tour);
            assert.deepEqual(await landmarks(page), { mains: 1, h1: 1 }, `${stop.name}: one main landmark and one level-one heading`);
            assert.deepEqual(await violations(page), [], `${stop.name}, ${scheme}, ${width} px`);
          };
          const { page } = tour;
          await page.setViewportSize({ width, height: 800 });
          await page.emulateMedia({ colorScheme: scheme });
          for (const stop of SIGNED_IN_STOPS) await check(page, stop);
          const out = await signedOutPage(tour, { width, height: 800 });
          try {
            await out.page.emulateMedia({ colorScheme: scheme });
            for (const stop of SIGNED_OUT_STOPS) await check(out.page, stop);
          } finally {
            await out.close();
          }
        });
      }
    }
  });

  describe('the page: keyboard', () => {
    before(async () => {
      await tour.page.setViewportSize({ width: 1280, height: 800 });
      await tour.page.emulateMedia({ colorScheme: null });
    });

    const focused = (page: Page) =>
      page.evaluate(
        `(() => { const e = document.activeElement; return e ? (e.id || e.getAttribute('aria-label') || e.textContent.trim()) : ''; })()`,
      ) as Promise<string>;

    it('has a skip link first, to the main content, without changing the section', async () => {
      const { page } = tour;
      await SIGNED_IN_STOPS[0]!.show(page, tour);
      // The first Tab of a page just loaded.
      await page.reload();
      await pageLive(page);
      await page.keyboard.press('Tab');
      assert.equal(await focused(page), 'Skip to content');
      assert.equal(await page.getByRole('link', { name: 'Skip to content' }).isVisible(), true, 'visible once focused');
      await page.keyboard.press('Enter');
      assert.equal(await focused(page), 'main');
      assert.equal(new URL(page.url()).hash, '#connections');
      await page.keyboard.press('Tab');
      const next = await focused(page);
      assert.ok(
        !['Skip to content', 'Menu', 'Connections', 'Skills', 'Agent access', 'Server'].includes(next),
        `Tab goes on inside the content, to ${next}`,
      );
    });

    it('puts focus into the API-key form when Connect opens it, and Escape closes it back onto Connect', async () => {
      const { page } = tour;
      const available = page.getByRole('region', { name: 'Available' });
      await available.getByRole('searchbox', { name: 'Search connectors' }).fill('context7');
      await available.getByRole('button', { name: 'Connect Context7' }).click();
      const form = available.getByRole('form', { name: 'API key for Context7' });
      await form.waitFor();
      assert.equal(await page.evaluate(`document.activeElement.closest('form')?.getAttribute('aria-label')`), 'API key for Context7');
      await page.keyboard.press('Escape');
      await form.waitFor({ state: 'detached' });
      await pageUntil(page, `document.activeElement?.getAttribute('aria-label') === 'Connect Context7'`);
    });

    it('closes “Add a server that is not listed” with Escape, focus on its summary', async () => {
      const { page } = tour;
      await page.getByText('Add a server that is not listed').click();
      const form = page.getByRole('form', { name: 'Add a server that is not listed' });
      await form.getByRole('textbox', { name: 'Server URL' }).focus();
      await page.keyboard.press('Escape');
      await form.waitFor({ state: 'hidden' });
      assert.equal(await focused(page), 'Add a server that is not listed');
    });

    it('closes a Remove confirmation with Escape, keeping the connection, focus back on Remove', async () => {
      const { page } = tour;
      const row = page.getByRole('region', { name: 'Connected' }).getByRole('listitem').filter({ hasText: 'Issue tracker' });
      await row.getByRole('button', { name: /^Remove/ }).click();
      const confirm = row.getByRole('group', { name: 'Remove Issue tracker?' });
      await confirm.waitFor();
      assert.equal(await focused(page), 'No');
      await page.keyboard.press('Escape');
      await confirm.waitFor({ state: 'detached' });
      await pageUntil(
        page,
        `/^Remove/.test(document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent || '')`,
      );
      await row.getByText('Connected', { exact: true }).waitFor();
    });

    it('closes the menu with Escape on a narrow screen, focus back on Menu', async () => {
      const { page } = tour;
      await page.setViewportSize({ width: 360, height: 800 });
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.click();
      await page.getByRole('link', { name: 'Skills' }).focus();
      await page.keyboard.press('Escape');
      assert.equal(await menu.getAttribute('aria-expanded'), 'false');
      assert.equal(await focused(page), 'menu-button');
      await page.setViewportSize({ width: 1280, height: 800 });
    });
  });
});
