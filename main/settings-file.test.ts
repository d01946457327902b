import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from './config.js';
import { configDir, effectiveSettings, environmentWith, parseSettings, readSettingsFile } from './settings-file.js';

describe('the settings file', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-settings-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lives in the platform's config folder", () => {
    assert.equal(configDir({ XDG_CONFIG_HOME: '/x/config' }, 'linux'), '/x/config/persona-mcp-workspace');
    assert.equal(configDir({}, 'linux'), join(homedir(), '.config', 'persona-mcp-workspace'));
    assert.equal(configDir({ XDG_CONFIG_HOME: 'relative' }, 'linux'), join(homedir(), '.config', 'persona-mcp-workspace'));
    assert.equal(configDir({}, 'darwin'), join(homedir(), 'Library', 'Application Support', 'persona-mcp-workspace'));
    assert.equal(
      configDir({ APPDATA: 'C:\\Users\\a\\AppData\\Roaming' }, 'win32'),
      join('C:\\Users\\a\\AppData\\Roaming', 'persona-mcp-workspace'),
    );
  });

  it('is optional in the config folder, and required when --config names it', async () => {
    const none = readSettingsFile(undefined, { XDG_CONFIG_HOME: dir });
    assert.deepEqual(none, { path: join(dir, 'persona-mcp-workspace', 'settings.json'), found: false, settings: {} });
    assert.throws(
      () => readSettingsFile(join(dir, 'missing.json')),
      /The settings file .*missing\.json cannot be read \(ENOENT\)\. Check the path given to --config\./,
    );
  });

  it('takes flag over environment over file over default', async () => {
    const path = join(dir, 'precedence.json');
    await writeFile(
      path,
      JSON.stringify({
        port: 9300,
        host: 'localhost',
        controlPort: 9301,
        shellMaxTimeout: 45,
        allowedHosts: ['a.example', 'b.example'],
        allowPrivateNetwork: true,
        noAuth: true,
        clientMetadataUrl: 'https://apps.example/workspace.json',
      }),
    );
    const file = readSettingsFile(path);
    assert.equal(file.found, true);
    const env = environmentWith(file.settings, { WORKSPACE_CONTROL_PORT: '9401' });
    const config = loadConfig({ port: 9500 }, env);
    assert.equal(config.port, 9500, 'the flag');
    assert.equal(config.controlPort, 9401, 'the environment');
    assert.equal(config.host, 'localhost', 'the file');
    assert.equal(config.shellMaxTimeoutSeconds, 45, 'the file');
    assert.deepEqual(config.allowedHosts, ['a.example', 'b.example']);
    assert.equal(config.allowPrivateNetwork, true);
    assert.equal(config.auth, false);
    assert.equal(config.clientMetadataUrl, 'https://apps.example/workspace.json', 'the file');
    assert.equal(config.sessionIdleTimeoutMs, 30 * 60_000, 'the default');

    const rows = Object.fromEntries(
      effectiveSettings({ port: '9500' }, file, { WORKSPACE_CONTROL_PORT: '9401', WORKSPACE_JWT_SECRET: 'hush-7731' }).map((r) => [
        r.name,
        r,
      ]),
    );
    assert.deepEqual(rows.port, { name: 'port', value: '9500', source: '--port' });
    assert.deepEqual(rows.controlPort, { name: 'controlPort', value: '9401', source: 'WORKSPACE_CONTROL_PORT' });
    assert.deepEqual(rows.host, { name: 'host', value: 'localhost', source: path });
    assert.deepEqual(rows.allowedHosts, { name: 'allowedHosts', value: 'a.example,b.example', source: path });
    assert.deepEqual(rows.sessionIdleTimeout, { name: 'sessionIdleTimeout', value: '30', source: 'default' });
    assert.deepEqual(rows.jwtSecret, { name: 'jwtSecret', value: '(set)', source: 'WORKSPACE_JWT_SECRET' }, 'a secret is never printed');
  });

  it('names the setting that is wrong', () => {
    const cases: Array<[string, RegExp]> = [
      ['{', /is not valid JSON/],
      ['[1]', /must hold one JSON object/],
      ['{"prot": 9100}', /has an unknown setting "prot"\. The settings are: port, host, /],
      ['{"port": "9100"}', /: "port" must be a whole number from 0 to 65535\./],
      ['{"shellMaxTimeout": -1}', /: "shellMaxTimeout" must be a number of seconds above 0\./],
      ['{"toolSearchThreshold": 2.5}', /: "toolSearchThreshold" must be a whole number above 0\./],
      ['{"allowPrivateNetwork": "yes"}', /: "allowPrivateNetwork" must be true or false\./],
      ['{"allowedOrigins": "https://a"}', /: "allowedOrigins" must be a list of text/],
      ['{"secretStore": "vault"}', /: "secretStore" must be "keychain" or "file"\./],
      ['{"jwtIssuer": 5}', /: "jwtIssuer" must be text/],
    ];
    for (const [text, message] of cases) {
      assert.throws(
        () => parseSettings(text, '/etc/x/settings.json'),
        (e: unknown) =>
          e instanceof ConfigError && e.message.startsWith('The settings file /etc/x/settings.json') && message.test(e.message),
        text,
      );
    }
  });
});
