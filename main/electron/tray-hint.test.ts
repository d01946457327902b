import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import { loadSettings, SETTINGS_FILE } from './settings.js';
import { TrayHint } from './tray-hint.js';

describe('TrayHint', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-tray-hint-'));
    path = join(dir, SETTINGS_FILE);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says it on the first hide only, and remembers it in a new settings file across runs', async () => {
    const first = new TrayHint(path);
    assert.deepEqual(await first.onHide(), { show: true });
    assert.deepEqual(await first.onHide(), { show: false });
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { trayHintShown: true });
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    // The next start of the app.
    assert.deepEqual(await new TrayHint(path).onHide(), { show: false });
    // The file stays one the app and the CLI read.
    assert.equal(loadSettings(dir, {}).problem, undefined);
  });

  it("keeps every setting a person wrote, in order, and the file's mode", async () => {
    await writeFile(path, '{\n  "port": 9300,\n  "startServerAtLaunch": false,\n  "allowedHosts": ["a.example"]\n}\n', { mode: 0o640 });
    assert.deepEqual(await new TrayHint(path).onHide(), { show: true });
    const text = await readFile(path, 'utf8');
    assert.deepEqual(Object.entries(JSON.parse(text)), [
      ['port', 9300],
      ['startServerAtLaunch', false],
      ['allowedHosts', ['a.example']],
      ['trayHintShown', true],
    ]);
    assert.equal((await stat(path)).mode & 0o777, 0o640);
    const loaded = loadSettings(dir, {});
    assert.deepEqual(loaded.settings, { startServerAtLaunch: false });
    assert.equal(loaded.env.WORKSPACE_PORT, '9300');
  });

  it('shows nothing when a person already set it', async () => {
    await writeFile(path, '{"trayHintShown": true}');
    assert.deepEqual(await new TrayHint(path).onHide(), { show: false });
  });

  it('never rewrites a file that does not parse: shows the hint once in this run and says why it is not remembered', async () => {
    await writeFile(path, '{"port": 9300,');
    const hint = new TrayHint(path);
    const decision = await hint.onHide();
    assert.equal(decision.show, true);
    assert.match(decision.problem ?? '', /settings\.json is not valid JSON .* The tray hint will show again at the next start\./);
    assert.equal(await readFile(path, 'utf8'), '{"port": 9300,');
    assert.deepEqual(await hint.onHide(), { show: false });
  });
});
