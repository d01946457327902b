import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { applyWorkingDirectory, ConfigError, isLoopbackHost, loadConfig, stateDirFrom } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({}, {});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 9100);
    assert.equal(config.auth, true);
    assert.equal(config.shellMaxTimeoutSeconds, 600);
    assert.equal(config.skillsDir, join(process.cwd(), '.agents/skills'));
    assert.equal(config.sessionIdleTimeoutMs, 30 * 60_000);
    assert.deepEqual(config.jwt, {
      secret: undefined,
      publicKeyPem: undefined,
      jwksUrl: undefined,
      issuer: undefined,
      audience: undefined,
    });
  });

  it('reads the environment', () => {
    const config = loadConfig(
      { port: 0 },
      {
        WORKSPACE_SKILLS_DIR: '/opt/skills',
        WORKSPACE_SHELL_MAX_TIMEOUT: '30',
        WORKSPACE_ALLOWED_HOSTS: 'Box.Local, dev.example',
        WORKSPACE_JWT_SECRET: 's',
        WORKSPACE_JWKS_URL: 'https://id.example/jwks.json',
        WORKSPACE_JWT_ISSUER: 'i',
        WORKSPACE_JWT_AUDIENCE: 'a',
      },
    );
    assert.equal(config.skillsDir, '/opt/skills');
    assert.equal(config.shellMaxTimeoutSeconds, 30);
    assert.deepEqual(config.allowedHosts, ['box.local', 'dev.example']);
    assert.equal(config.jwt.jwksUrl, 'https://id.example/jwks.json');
  });

  it("reads the machine's default sandbox limits, each in its range", () => {
    assert.deepEqual(loadConfig({}, {}).sandboxLimits, {});
    assert.deepEqual(
      loadConfig({}, { WORKSPACE_SANDBOX_PROCESSES: '512', WORKSPACE_SANDBOX_MEMORY_MB: '2048', WORKSPACE_SANDBOX_TMP_MB: '100' })
        .sandboxLimits,
      { processes: 512, memoryMb: 2048, tmpMb: 100 },
    );
    for (const [name, value] of [
      ['WORKSPACE_SANDBOX_PROCESSES', '8'],
      ['WORKSPACE_SANDBOX_MEMORY_MB', '1.5'],
      ['WORKSPACE_SANDBOX_TMP_MB', 'lots'],
    ]) {
      assert.throws(
        () => loadConfig({}, { [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${name}=${value} is not a whole number from`),
      );
    }
  });

  it('refuses --no-auth on a non-loopback address', () => {
    assert.throws(
      () => loadConfig({ auth: false, host: '0.0.0.0' }, {}),
      (e: unknown) => e instanceof ConfigError && /loopback/.test(e.message),
    );
    assert.equal(loadConfig({ auth: false, host: 'localhost' }, {}).auth, false);
    assert.equal(loadConfig({ auth: false, host: '::1' }, {}).auth, false);
  });

  it('refuses bad numbers and URLs with the variable named', () => {
    for (const [name, value] of [
      ['WORKSPACE_SHELL_MAX_TIMEOUT', '-1'],
      ['WORKSPACE_SHELL_MAX_TIMEOUT', 'ten'],
      ['WORKSPACE_SHELL_MAX_TIMEOUT', '99999999'],
      ['WORKSPACE_SESSION_IDLE_TIMEOUT', '0'],
    ]) {
      assert.throws(
        () => loadConfig({}, { [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${name}=${value}`),
      );
    }
    assert.throws(() => loadConfig({}, { WORKSPACE_JWKS_URL: 'http://id.example/jwks' }), /https/);
    assert.equal(loadConfig({}, { WORKSPACE_JWKS_URL: 'http://127.0.0.1:8080/jwks' }).jwt.jwksUrl, 'http://127.0.0.1:8080/jwks');
    assert.throws(() => loadConfig({ port: 70000 }, {}), /port/);
  });

  it('takes WORKSPACE_PUBLIC_URL as an https origin only', () => {
    assert.equal(loadConfig({}, {}).publicUrl, undefined);
    assert.equal(loadConfig({}, { WORKSPACE_PUBLIC_URL: 'https://Box.example.com/' }).publicUrl, 'https://box.example.com');
    assert.equal(loadConfig({}, { WORKSPACE_PUBLIC_URL: 'https://box.example.com:8443/mcp' }).publicUrl, 'https://box.example.com:8443');
    for (const [value, why] of [
      ['http://box.example.com', /not https/],
      ['https://box.example.com/workspace', /more than an origin/],
      ['https://me:pw@box.example.com', /more than an origin/],
      ['https://box.example.com/?a=1', /more than an origin/],
      ['box.example.com', /not a URL/],
    ] as const) {
      assert.throws(
        () => loadConfig({}, { WORKSPACE_PUBLIC_URL: value }),
        (e: unknown) => e instanceof ConfigError && e.message.startsWith(`WORKSPACE_PUBLIC_URL=${value}`) && why.test(e.message),
      );
    }
  });

  it('takes the client ID metadata document URL from the flag, else the environment, and only as https with a path', () => {
    assert.equal(loadConfig({}, {}).clientMetadataUrl, undefined);
    const document = 'https://apps.example/oauth/workspace.json';
    assert.equal(loadConfig({}, { WORKSPACE_CLIENT_METADATA_URL: document }).clientMetadataUrl, document);
    assert.equal(
      loadConfig({ clientMetadataUrl: document }, { WORKSPACE_CLIENT_METADATA_URL: 'https://other.example/c.json' }).clientMetadataUrl,
      document,
    );
    for (const bad of [
      'http://apps.example/oauth/workspace.json',
      'https://apps.example/',
      'https://apps.example',
      'apps.example/c.json',
      'https://apps.example/c.json#x',
    ]) {
      assert.throws(
        () => loadConfig({}, { WORKSPACE_CLIENT_METADATA_URL: bad }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message.startsWith(`WORKSPACE_CLIENT_METADATA_URL=${bad} is not the https URL of a client ID metadata document`),
      );
    }
    assert.throws(
      () => loadConfig({ clientMetadataUrl: 'http://x.example/c.json' }, {}),
      /^ConfigError: --client-metadata-url=http:\/\/x\.example\/c\.json/,
    );
  });

  it('takes the public key as PEM text or as a path to a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cfg-'));
    const pem = '-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n';
    await writeFile(join(dir, 'key.pem'), pem);
    assert.equal(loadConfig({}, { WORKSPACE_JWT_PUBLIC_KEY: pem }).jwt.publicKeyPem, pem);
    assert.equal(loadConfig({}, { WORKSPACE_JWT_PUBLIC_KEY: join(dir, 'key.pem') }).jwt.publicKeyPem, pem);
    assert.throws(() => loadConfig({}, { WORKSPACE_JWT_PUBLIC_KEY: join(dir, 'missing.pem') }), /neither a PEM key nor a readable file/);
    await rm(dir, { recursive: true });
  });
});

describe('state dir and working directory', () => {
  it('uses WORKSPACE_STATE_DIR, else the XDG state dir', () => {
    assert.equal(stateDirFrom({ WORKSPACE_STATE_DIR: '/srv/state' }), '/srv/state');
    assert.equal(stateDirFrom({ XDG_STATE_HOME: '/x/state' }), '/x/state/persona-mcp-workspace');
    assert.equal(stateDirFrom({}), join(homedir(), '.local/state/persona-mcp-workspace'));
  });

  it('chdirs into WORKSPACE_CWD, and says so when it cannot', async () => {
    const before = process.cwd();
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'cwd-')));
    try {
      applyWorkingDirectory({ WORKSPACE_CWD: dir });
      assert.equal(process.cwd(), dir);
      assert.throws(() => applyWorkingDirectory({ WORKSPACE_CWD: join(dir, 'missing') }), /WORKSPACE_CWD=.*ENOENT/);
    } finally {
      process.chdir(before);
      await rm(dir, { recursive: true });
    }
  });

  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '128.0.0.1']) assert.ok(!isLoopbackHost(h), h);
  });
});
