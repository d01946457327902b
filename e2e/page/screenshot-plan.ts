import { SIGNED_IN_STOPS, SIGNED_OUT_STOPS, type TourStop } from './tour.js';

// What `npm run screenshots` takes: every stop of the tour (so every screen of the page) at each
// width and in each colour scheme, one PNG each in docs/screenshots/.

export const SCREENSHOT_DIR = 'docs/screenshots';
export const WIDTHS = [1280, 800, 360] as const;
export const THEMES = ['light', 'dark'] as const;
/** Tall enough for a screen's first view, at a height windows of that width have. */
export const HEIGHT_OF: Record<(typeof WIDTHS)[number], number> = { 1280: 800, 800: 720, 360: 740 };

export interface Shot {
  stop: TourStop;
  signedIn: boolean;
  width: (typeof WIDTHS)[number];
  theme: (typeof THEMES)[number];
  /** `<stop>-<width>-<theme>.png`, inside SCREENSHOT_DIR. */
  file: string;
}

export function screenshotPlan(): Shot[] {
  const shots: Shot[] = [];
  for (const theme of THEMES) {
    for (const width of WIDTHS) {
      for (const [stops, signedIn] of [
        [SIGNED_IN_STOPS, true],
        [SIGNED_OUT_STOPS, false],
      ] as const) {
        for (const stop of stops) shots.push({ stop, signedIn, width, theme, file: `${stop.name}-${width}-${theme}.png` });
      }
    }
  }
  return shots;
}
