import { encodePng } from './png.js';
import type { TrayIconName } from './tray-state.js';

// The tray's icons, drawn in code at 32×32: a ring (the server), a dot in it while agents can
// connect, and a badge at the top right when a connection needs its person to sign in. The shapes
// alone tell the states apart, so macOS's one-colour template images show them too.

export const TRAY_ICON_SIZE = 32;

/** `color` for Linux and Windows (shown as drawn); `template` is black on transparent, which macOS recolours for the menu bar. */
export type TrayIconVariant = 'color' | 'template';

type Rgb = readonly [number, number, number];

const BLUE: Rgb = [0x25, 0x63, 0xeb];
const GREY: Rgb = [0x6b, 0x72, 0x80];
const AMBER: Rgb = [0xd9, 0x77, 0x06];
const BLACK: Rgb = [0, 0, 0];

const CENTER = 16;
const RING_OUTER = 13;
const RING_INNER = 9.5;
const DOT = 5;
const BADGE = { x: 25, y: 7, r: 6, gap: 2 };
// Each pixel is sampled 4×4 times: smooth edges without an anti-aliasing library.
const SAMPLES = 4;

interface Shape {
  color: Rgb;
  covers(x: number, y: number): boolean;
}

function shapesOf(name: TrayIconName, variant: TrayIconVariant): Shape[] {
  const tint = (rgb: Rgb): Rgb => (variant === 'template' ? BLACK : rgb);
  const distance = (x: number, y: number, cx: number, cy: number) => Math.hypot(x - cx, y - cy);
  const inBadgeGap = (x: number, y: number) => distance(x, y, BADGE.x, BADGE.y) < BADGE.r + BADGE.gap;
  const withBadge = name === 'tray-attention';
  const ringColor = tint(name === 'tray-stopped' ? GREY : BLUE);
  const shapes: Shape[] = [
    {
      color: ringColor,
      covers: (x, y) => {
        const d = distance(x, y, CENTER, CENTER);
        return d <= RING_OUTER && d >= RING_INNER && !(withBadge && inBadgeGap(x, y));
      },
    },
  ];
  if (name !== 'tray-stopped') shapes.push({ color: ringColor, covers: (x, y) => distance(x, y, CENTER, CENTER) <= DOT });
  if (withBadge) shapes.push({ color: tint(AMBER), covers: (x, y) => distance(x, y, BADGE.x, BADGE.y) <= BADGE.r });
  return shapes;
}

/** The PNG of a tray icon. */
export function trayIconPng(name: TrayIconName, variant: TrayIconVariant): Buffer {
  const size = TRAY_ICON_SIZE;
  const shapes = shapesOf(name, variant);
  const rgba = new Uint8Array(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const hits = new Map<Shape, number>();
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = px + (sx + 0.5) / SAMPLES;
          const y = py + (sy + 0.5) / SAMPLES;
          // The last shape drawn is on top.
          const top = shapes.findLast((shape) => shape.covers(x, y));
          if (top) hits.set(top, (hits.get(top) ?? 0) + 1);
        }
      }
      const covered = [...hits.values()].reduce((a, b) => a + b, 0);
      if (!covered) continue;
      // The colour of the shape covering most of the pixel; its coverage is the alpha.
      const [main] = [...hits.entries()].sort((a, b) => b[1] - a[1])[0]!;
      const at = (py * size + px) * 4;
      rgba.set([...main.color, Math.round((255 * covered) / (SAMPLES * SAMPLES))], at);
    }
  }
  return encodePng(size, size, rgba);
}
