import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseCommand, USAGE } from './cli-args.js';
import { loadConfig, stateDirFrom } from './config.js';
import { effectiveSettings } from './settings-file.js';
import { SETTINGS, type Setting } from './settings.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const settings = Object.entries(SETTINGS) as Array<[string, Setting]>;

/** The product's source files (not tests), as paths relative to the repository. */
async function productSources(): Promise<string[]> {
  const found: string[] = [];
  for (const dir of ['main', 'common', 'preload']) {
    for (const entry of await readdir(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts'))
        found.push(relative(root, join(entry.parentPath, entry.name)));
    }
  }
  return found;
}

describe('the settings, defined once', () => {
  it('name every WORKSPACE_ variable the product reads, and each of theirs is read', async () => {
    const read = new Map<string, string[]>();
    for (const file of await productSources()) {
      if (file === join('main', 'settings.ts')) continue;
      for (const [variable] of (await readFile(join(root, file), 'utf8')).matchAll(/\bWORKSPACE_[A-Z0-9_]+/g))
        read.set(variable, [...(read.get(variable) ?? []), file]);
    }
    const defined = new Set(settings.flatMap(([, s]) => (s.env ? [s.env] : [])));
    for (const [variable, files] of read)
      assert.ok(defined.has(variable), `${variable} is read in ${files[0]} but is no setting of main/settings.ts`);
    for (const variable of defined) assert.ok(read.has(variable), `${variable} is a setting that nothing reads`);
  });

  it('give loadConfig its defaults', () => {
    const config = loadConfig({}, {});
    const shown = Object.fromEntries(
      effectiveSettings({}, { path: 'none', found: false, settings: {} }, {}).map((row) => [row.name, row.value]),
    );
    assert.equal(String(config.port), shown.port);
    assert.equal(config.host, shown.host);
    assert.equal(String(config.controlPort), shown.controlPort);
    assert.equal(String(!config.auth), shown.noAuth);
    assert.equal(config.skillsDir, join(process.cwd(), shown.skillsDir!));
    assert.equal(String(config.shellMaxTimeoutSeconds), shown.shellMaxTimeout);
    assert.equal(String(config.bashOutputMaxBytes / 1024 ** 2), shown.bashOutputMaxMb);
    assert.equal(String(config.sessionIdleTimeoutMs / 60_000), shown.sessionIdleTimeout);
    assert.equal(config.registryUrl, shown.registryUrl);
    assert.equal(String(config.upstreamTimeoutMs / 1000), shown.upstreamTimeout);
    assert.equal(String(config.toolSearchThreshold), shown.toolSearchThreshold);
    assert.equal(String(config.allowPrivateNetwork), shown.allowPrivateNetwork);
    assert.deepEqual(
      [config.catalogFile, config.publicUrl, config.clientMetadataUrl, config.allowedHosts, config.allowedOrigins],
      [undefined, undefined, undefined, [], []],
    );
    assert.equal(
      stateDirFrom({ XDG_STATE_HOME: '/x/state' }),
      shown.stateDir!.replace(/^\$XDG_STATE_HOME/, '/x/state').replace(/ \(.*$/, ''),
    );
  });

  it('give each flag to the server, and --help names each flag and variable', () => {
    const options = USAGE.slice(USAGE.indexOf('Options:'), USAGE.indexOf('Environment:'));
    const environment = USAGE.slice(USAGE.indexOf('Environment:'));
    for (const [name, s] of settings) {
      if (s.flag) {
        const value = s.kind === 'boolean' ? [] : [s.kind === 'port' ? '9200' : 'https://apps.example/client.json'];
        const command = parseCommand([s.flag, ...value]);
        assert.equal(command.kind, 'serve', `${s.flag} starts the server`);
        assert.ok(Object.keys((command as { flags: object }).flags).length === 1, `${s.flag} (${name}) sets a flag`);
        assert.match(options, new RegExp(`\\n  ${s.flag}\\b`), `--help lists ${s.flag}`);
      }
      if (s.env)
        assert.match(environment, new RegExp(`\\n  ${s.env} +${s.kind === 'boolean' ? 'Set to 1: ' : ''}\\S`), `--help lists ${s.env}`);
    }
  });
});
