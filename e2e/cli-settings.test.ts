// The settings file under flags and the environment, and `config`, which prints where each setting comes from.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cliSandbox } from './fixtures/cli-process.js';

describe('settings from the command line', () => {
  const cli = cliSandbox('pw-cli-settings-');
  after(() => cli.remove());

  it('reads the settings file, with flags and the environment on top, and config prints where each setting comes from', async () => {
    const configDir = join(cli.root, 'config', 'persona-mcp-workspace');
    await mkdir(configDir, { recursive: true });
    await writeFile(
      join(configDir, 'settings.json'),
      JSON.stringify({ port: 9700, controlPort: 9701, host: 'localhost', shellMaxTimeout: 77, jwtSecret: 'file-secret-4417' }),
    );
    const shown = await cli.run(['config', '--port', '9800'], { WORKSPACE_CONTROL_PORT: '9901' });
    assert.equal(shown.code, 0, shown.stderr);
    const rows = Object.fromEntries(
      shown.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => {
          const [name, value, ...source] = line.split(/\s{2,}/);
          return [name, { value, source: source.join(' ') }];
        }),
    );
    assert.match(shown.stdout, new RegExp(`^Settings file: ${join(configDir, 'settings.json')}\n`));
    assert.deepEqual(rows.port, { value: '9800', source: '--port' });
    assert.deepEqual(rows.controlPort, { value: '9901', source: 'WORKSPACE_CONTROL_PORT' });
    assert.deepEqual(rows.host, { value: 'localhost', source: join(configDir, 'settings.json') });
    assert.deepEqual(rows.shellMaxTimeout, { value: '77', source: join(configDir, 'settings.json') });
    assert.deepEqual(rows.sessionIdleTimeout, { value: '30', source: 'default' });
    assert.deepEqual(rows.jwtSecret, { value: '(set)', source: join(configDir, 'settings.json') });
    assert.doesNotMatch(shown.stdout, /file-secret-4417/, 'a secret is never printed');
    const asJson = await cli.run(['config', '--json', '--port', '9800'], { WORKSPACE_CONTROL_PORT: '9901' });
    assert.equal(asJson.code, 0, asJson.stderr);
    const parsed = JSON.parse(asJson.stdout) as {
      settingsFile: { path: string; found: boolean };
      settings: Array<{ name: string; value: string; source: string }>;
    };
    assert.deepEqual(parsed.settingsFile, { path: join(configDir, 'settings.json'), found: true });
    const jsonRows = Object.fromEntries(parsed.settings.map(({ name, ...row }) => [name, row]));
    for (const name of ['port', 'controlPort', 'host', 'shellMaxTimeout', 'sessionIdleTimeout', 'jwtSecret'])
      assert.deepEqual(jsonRows[name], rows[name], name);
    assert.equal(parsed.settings.length, Object.keys(rows).length, 'every setting, as in the table');
    assert.doesNotMatch(asJson.stdout, /file-secret-4417/, 'a secret is never printed');

    // --config names another file; a bad one is a clear error naming the setting, and nothing starts.
    const other = join(cli.stateDir, 'other-settings.json');
    await writeFile(other, '{"upstreamTimeout": "soon"}');
    for (const args of [
      ['config', '--config', other],
      ['--config', other],
      ['token', 'list', '--config', other],
    ]) {
      const bad = await cli.run(args);
      assert.equal(bad.code, 2, args.join(' '));
      assert.equal(
        bad.stderr,
        `persona-mcp-workspace: The settings file ${other}: "upstreamTimeout" must be a number of seconds above 0.\n`,
      );
    }
    await writeFile(other, '{"skillsDir": "/srv/skills-from-other"}');
    const fromOther = await cli.run(['config', `--config=${other}`]);
    assert.match(fromOther.stdout, new RegExp(`^Settings file: ${other}\n`));
    assert.match(fromOther.stdout, /\nskillsDir\s+\/srv\/skills-from-other\s+\S*other-settings\.json\n/);
    assert.match(fromOther.stdout, /\nport\s+9100\s+default\n/, 'the other file replaces the one in the config folder');
  });
});
