import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { skipReason } from './page-support.js';
import { SIGNED_IN_STOPS, signedOutPage, SIGNED_OUT_STOPS, startTour, type Tour } from './tour.js';

// Every screen from 360 px wide up, in Debian's Chromium against a real host: nothing is wider than
// the window, the sections fold into a menu below 640 px, and the activity table stacks its cells.

if (skipReason) console.log(`# skipping the page tests: ${skipReason}`);

const WIDTHS = [360, 420, 800, 1280];

/** What the checks read of an element (the tests compile without the DOM's types). */
interface Box {
  getBoundingClientRect(): { left: number; top: number; height: number };
}

/** What sticks out past the window's right edge, if anything. */
function overflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number; wide: string[] }> {
  return page.evaluate(`(() => {
    const wide = [];
    for (const el of document.querySelectorAll('body *')) {
      const box = el.getBoundingClientRect();
      if (box.width && box.right > innerWidth + 0.5) wide.push(el.tagName.toLowerCase() + '.' + el.className + ' (' + Math.round(box.right) + ' px)');
    }
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, wide: wide.slice(0, 5) };
  })()`);
}

describe('the page: layout from 360 px up', { skip: skipReason }, () => {
  let tour: Tour;
  before(async () => {
    tour = await startTour();
  });
  after(() => tour?.close());

  for (const width of WIDTHS) {
    it(`fits every screen at ${width} px`, async () => {
      const { page } = tour;
      await page.setViewportSize({ width, height: 800 });
      for (const stop of SIGNED_IN_STOPS) {
        await stop.show(page, tour);
        const o = await overflow(page);
        assert.ok(o.scrollWidth <= o.innerWidth, `${stop.name} at ${width} px is ${o.scrollWidth} px wide: ${o.wide.join(', ')}`);
      }
      const out = await signedOutPage(tour, { width, height: 800 });
      try {
        for (const stop of SIGNED_OUT_STOPS) {
          await stop.show(out.page, tour);
          const o = await overflow(out.page);
          assert.ok(o.scrollWidth <= o.innerWidth, `${stop.name} at ${width} px is ${o.scrollWidth} px wide: ${o.wide.join(', ')}`);
        }
      } finally {
        await out.close();
      }
    });
  }

  it('folds the sections into a menu below 640 px, and the menu opens, navigates and closes', async () => {
    const { page } = tour;
    await page.setViewportSize({ width: 360, height: 800 });
    await SIGNED_IN_STOPS[0]!.show(page, tour);
    const menu = page.getByRole('button', { name: 'Menu' });
    const server = page.getByRole('link', { name: 'Server' });
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    assert.equal(await server.isVisible(), false, 'the sections are folded away');
    const railHeight = await page.locator('nav.rail').evaluate((el) => (el as unknown as Box).getBoundingClientRect().height);
    assert.ok(railHeight < 800 / 4, `the closed bar takes ${railHeight} px`);

    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await server.click();
    await page.getByRole('heading', { name: 'Server', level: 1 }).waitFor();
    assert.equal(await menu.getAttribute('aria-expanded'), 'false', 'choosing a section closes the menu');
    assert.equal(await server.isVisible(), false);

    await page.setViewportSize({ width: 640, height: 800 });
    assert.equal(await menu.isVisible(), false, 'no menu at 640 px');
    assert.equal(await server.isVisible(), true, 'the sections are in the rail');
  });

  it('folds the catalog at 360 px to a few screens tall, with search first and every connector reachable by keyboard', async () => {
    const { page } = tour;
    await page.setViewportSize({ width: 360, height: 800 });
    await SIGNED_IN_STOPS[0]!.show(page, tour);
    const available = page.getByRole('region', { name: 'Available' });
    const height = await page.evaluate(`document.documentElement.scrollHeight`);
    // The whole screen (the place, its connection, the catalog's first cards, the forms folded) within
    // under three windows' height: 2,058 px when written, against 6,456 px with the whole catalog.
    assert.ok((height as number) <= 2_200, `the Connections screen is ${height} px tall at 360 px`);
    // Search comes before the list, and finds what is folded away.
    const search = available.getByRole('searchbox', { name: 'Search connectors' });
    await search.fill('deepwiki');
    await available.getByRole('button', { name: 'Connect DeepWiki' }).waitFor();
    await search.fill('');

    // Every connector of the catalog, by keyboard alone: Tab to "Show all", Enter, and Tab on through each.
    const { json } = await tour.api('GET', '/catalog');
    const groups = new Set((json.groups as Array<{ id: string }>).map((g) => g.id));
    const wanted = (json.entries as Array<{ name: string; signInGroup?: string }>).map((e) =>
      e.signInGroup && groups.has(e.signInGroup) ? e.name : `Connect ${e.name}`,
    );
    await search.focus();
    const reached = new Set<string>();
    for (let i = 0; i < 200; i++) {
      await page.keyboard.press('Tab');
      const at = (await page.evaluate(
        `(() => { const e = document.activeElement; return e ? (e.getAttribute('aria-label') || e.textContent.trim()) : ''; })()`,
      )) as string;
      if (at === 'Add a server that is not listed') break;
      // A group's service chip is named for its service, with its state after a dot.
      reached.add(at.split(' · ')[0]!);
      // "Show all" goes, and the keyboard lands on the first connector it brings.
      if (at.startsWith('Show all ')) {
        await page.keyboard.press('Enter');
        const first = (await page.evaluate(`document.activeElement?.getAttribute('aria-label') ?? ''`)) as string;
        assert.match(first, /^Connect /, 'the keyboard lands on the first connector "Show all" brought');
        reached.add(first);
      }
    }
    const missed = wanted.filter((name) => !reached.has(name));
    assert.deepEqual(missed, [], 'connectors the keyboard never reached');
  });

  it('stacks the activity table into labelled lines on a narrow screen, and keeps it a table at 1280 px', async () => {
    const { page } = tour;
    const row = () =>
      page
        .getByRole('region', { name: 'Recent activity' })
        .getByRole('row')
        .filter({ has: page.getByRole('cell', { name: 'bash', exact: true }) });
    await page.setViewportSize({ width: 360, height: 800 });
    await SIGNED_IN_STOPS[6]!.show(page, tour);
    const cells = row().locator('td');
    const lefts = await cells.evaluateAll((tds) => tds.map((td) => Math.round((td as unknown as Box).getBoundingClientRect().left)));
    assert.equal(new Set(lefts).size, 1, `one cell under the other: ${lefts.join(', ')}`);
    assert.equal(await page.evaluate(`getComputedStyle(document.querySelectorAll('.activity td')[1], '::before').content`), '"Tool" / ""');
    // Still a table for a screen reader: the cells keep their role and their column header.
    assert.equal(await row().count(), 1);

    await page.setViewportSize({ width: 1280, height: 800 });
    const tops = await cells.evaluateAll((tds) => tds.map((td) => Math.round((td as unknown as Box).getBoundingClientRect().top)));
    assert.equal(new Set(tops).size, 1, `one row: ${tops.join(', ')}`);
  });
});
