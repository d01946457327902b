import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { TRAY_ICON_SIZE, trayIconPng, type TrayIconVariant } from './tray-icon.js';
import type { TrayIconName } from './tray-state.js';

/** Reads back the PNGs the tray icons are (8-bit RGBA, filter 0 on every row, as encodePng writes them). */
function decode(png: Buffer): { width: number; height: number; pixel(x: number, y: number): [number, number, number, number] } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the PNG signature');
  let offset = 8;
  let width = 0;
  let height = 0;
  const data: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.deepEqual([body[8], body[9]], [8, 6], '8-bit RGBA');
    }
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  assert.equal(raw.length, (width * 4 + 1) * height);
  return {
    width,
    height,
    pixel: (x, y) => {
      const at = y * (width * 4 + 1) + 1 + x * 4;
      return [raw[at]!, raw[at + 1]!, raw[at + 2]!, raw[at + 3]!];
    },
  };
}

const NAMES: TrayIconName[] = ['tray-running', 'tray-stopped', 'tray-attention'];
const CENTER = 16;
// Inside the badge, outside the ring.
const BADGE: [number, number] = [28, 4];
const RING: [number, number] = [CENTER, CENTER + 11];

describe('trayIconPng', () => {
  for (const variant of ['color', 'template'] as TrayIconVariant[]) {
    it(`draws each state differently, by shape alone (${variant})`, () => {
      const icons = Object.fromEntries(NAMES.map((name) => [name, decode(trayIconPng(name, variant))]));
      for (const icon of Object.values(icons)) assert.deepEqual([icon.width, icon.height], [TRAY_ICON_SIZE, TRAY_ICON_SIZE]);
      const opaque = (name: TrayIconName, [x, y]: [number, number]) => icons[name]!.pixel(x, y)[3] === 255;
      // Every state has the ring.
      for (const name of NAMES) assert.ok(opaque(name, RING), `${name} has its ring`);
      // The dot: agents can connect.
      assert.ok(opaque('tray-running', [CENTER, CENTER]));
      assert.ok(opaque('tray-attention', [CENTER, CENTER]));
      assert.equal(icons['tray-stopped']!.pixel(CENTER, CENTER)[3], 0, 'stopped: no dot');
      // The badge: a sign-in waits.
      assert.ok(opaque('tray-attention', BADGE));
      assert.equal(icons['tray-running']!.pixel(...BADGE)[3], 0);
      assert.equal(icons['tray-stopped']!.pixel(...BADGE)[3], 0);
    });
  }

  it('is black on transparent as a template, coloured otherwise: blue running, grey stopped, an amber badge', () => {
    for (const name of NAMES) {
      const icon = decode(trayIconPng(name, 'template'));
      for (let y = 0; y < icon.height; y++)
        for (let x = 0; x < icon.width; x++) assert.deepEqual(icon.pixel(x, y).slice(0, 3), [0, 0, 0], `${name} at ${x},${y}`);
    }
    assert.deepEqual(decode(trayIconPng('tray-running', 'color')).pixel(...RING), [0x25, 0x63, 0xeb, 255]);
    assert.deepEqual(decode(trayIconPng('tray-stopped', 'color')).pixel(...RING), [0x6b, 0x72, 0x80, 255]);
    assert.deepEqual(decode(trayIconPng('tray-attention', 'color')).pixel(...BADGE), [0xd9, 0x77, 0x06, 255]);
  });
});
