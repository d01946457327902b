import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_SETTINGS, loadSettings, parseSettings, SETTINGS_FILE, userDataDirFromArgs } from './settings.js';

describe('parseSettings', () => {
  it('reads the known settings, with the defaults for the rest', () => {
    assert.deepEqual(parseSettings('{}'), { startServerAtLaunch: true });
    assert.deepEqual(parseSettings('{"startServerAtLaunch": false}'), { startServerAtLaunch: false });
    assert.deepEqual(parseSettings('{"port": 0}'), { startServerAtLaunch: true, port: 0 });
  });

  it('says what is wrong with a file it cannot use', () => {
    assert.throws(() => parseSettings('{'), /not valid JSON/);
    assert.throws(() => parseSettings('[]'), /must be a JSON object/);
    assert.throws(() => parseSettings('null'), /must be a JSON object/);
    assert.throws(() => parseSettings('{"startServerAtLaunch": "no"}'), /startServerAtLaunch must be true or false/);
    assert.throws(() => parseSettings('{"port": 70000}'), /port must be a whole number/);
    assert.throws(() => parseSettings('{"port": 1.5}'), /port must be a whole number/);
    assert.throws(() => parseSettings('{"startServerAtLunch": false}'), /unknown setting "startServerAtLunch"/);
  });
});

describe('loadSettings', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-settings-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uses the defaults when there is no file', async () => {
    assert.deepEqual(await loadSettings(dir), { settings: DEFAULT_SETTINGS });
  });

  it('reads the file', async () => {
    await writeFile(join(dir, SETTINGS_FILE), '{"startServerAtLaunch": false}');
    assert.deepEqual(await loadSettings(dir), { settings: { startServerAtLaunch: false } });
  });

  it('reports a broken file, leaves it as it is, and uses the defaults', async () => {
    await writeFile(join(dir, SETTINGS_FILE), '{"startServerAtLaunch": 0}');
    const { settings, problem } = await loadSettings(dir);
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.match(problem ?? '', /settings\.json: startServerAtLaunch must be true or false\. Using the defaults until it is fixed\./);
  });
});

describe('userDataDirFromArgs', () => {
  it('reads --user-data-dir=<path>, relative to the working directory', () => {
    assert.equal(userDataDirFromArgs(['/e/electron', '/app', '--user-data-dir=/tmp/profile'], '/w'), '/tmp/profile');
    assert.equal(userDataDirFromArgs(['/e/electron', '--user-data-dir=profile', '--hidden'], '/w'), '/w/profile');
  });

  it('answers nothing when the switch is absent or empty', () => {
    assert.equal(userDataDirFromArgs(['/e/electron', '/app', '--hidden'], '/w'), undefined);
    assert.equal(userDataDirFromArgs(['/e/electron', '--user-data-dir='], '/w'), undefined);
  });
});
