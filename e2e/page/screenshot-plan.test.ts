import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { SECTIONS } from '../../renderer/app/sections.js';
import { SCREENSHOT_DIR, screenshotPlan, THEMES, WIDTHS } from './screenshot-plan.js';
import { SIGNED_IN_STOPS, SIGNED_OUT_STOPS } from './tour.js';

// `npm run screenshots` walks the tour; this checks, without a browser, that the tour reaches every
// section of the page's navigation, so a new screen without a screenshot fails here.

describe('the screenshots', () => {
  it('cover every section of the navigation', () => {
    const shown = new Set(SIGNED_IN_STOPS.map((stop) => stop.section));
    const missing = SECTIONS.filter((section) => !shown.has(section.id)).map((section) => section.label);
    assert.deepEqual(missing, [], 'a section with no stop in e2e/page/tour.ts, so no screenshot');
  });

  it('take every stop of the tour at 1280, 800 and 360 px, light and dark, each in a file of its own', () => {
    const plan = screenshotPlan();
    const stops = [...SIGNED_IN_STOPS, ...SIGNED_OUT_STOPS];
    assert.deepEqual([...WIDTHS], [1280, 800, 360]);
    assert.deepEqual([...THEMES], ['light', 'dark']);
    assert.equal(plan.length, stops.length * WIDTHS.length * THEMES.length);
    assert.equal(new Set(plan.map((shot) => shot.file)).size, plan.length, 'no two shots share a file');
    for (const stop of stops) {
      for (const width of WIDTHS) {
        for (const theme of THEMES)
          assert.ok(
            plan.some((shot) => shot.file === `${stop.name}-${width}-${theme}.png` && shot.stop === stop),
            `${stop.name} ${width} ${theme}`,
          );
      }
    }
    assert.ok(
      plan.every((shot) => shot.signedIn === SIGNED_IN_STOPS.includes(shot.stop)),
      'signed-out stops are taken without the login',
    );
  });

  it('are all in the repository (npm run screenshots takes them)', () => {
    const taken = new Set(readdirSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', SCREENSHOT_DIR)));
    assert.deepEqual(
      screenshotPlan()
        .map((shot) => shot.file)
        .filter((file) => !taken.has(file)),
      [],
      `missing from ${SCREENSHOT_DIR}: run npm run screenshots`,
    );
  });
});
