import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_SETTINGS, loadSettings, SETTINGS_FILE, userDataDirFromArgs } from './settings.js';

describe('loadSettings', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-settings-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uses the defaults when there is no file', () => {
    assert.deepEqual(loadSettings(dir, { A: '1' }), { settings: DEFAULT_SETTINGS, env: { A: '1' } });
  });

  it("reads the desktop's own settings and the server's from the one settings file, the environment on top", async () => {
    await writeFile(join(dir, SETTINGS_FILE), '{"startServerAtLaunch": false, "port": 0, "skillsDir": "/srv/skills"}');
    const { settings, env, problem } = loadSettings(dir, { WORKSPACE_SKILLS_DIR: '/env/skills' });
    assert.equal(problem, undefined);
    assert.deepEqual(settings, { startServerAtLaunch: false });
    assert.equal(env.WORKSPACE_PORT, '0');
    assert.equal(env.WORKSPACE_SKILLS_DIR, '/env/skills');
  });

  it('reports a broken file, naming the setting, leaves it as it is, and uses the defaults', async () => {
    await writeFile(join(dir, SETTINGS_FILE), '{"startServerAtLaunch": 0}');
    const { settings, problem } = loadSettings(dir, {});
    assert.deepEqual(settings, DEFAULT_SETTINGS);
    assert.match(problem ?? '', /settings\.json: "startServerAtLaunch" must be true or false\. Using the defaults until it is fixed\./);
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
