import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import { KeychainSecretStore } from '../main/secrets/keychain-store.js';
import { callApi } from '../test/support/control-api.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { filesUnder } from '../test/support/secrets.js';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauth-server.js';

// Machine logins: the owner sets a connection's client credentials (a client secret, or a private
// key that signs JWT assertions) through the page's API and the CLI; the app logs in with the
// client-credentials grant at once, with no browser, keeps the secret or key in the keychain only,
// gets a new token when the last one expires, and never shows them again. Real authorization
// server (oidc-provider), real MCP server behind it, real keychain, the built CLI.

const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const PLACE = 'Crew/ops';
const SECRET = 'machine-secret-3f9a71';

describe('machine logins (client credentials) of OAuth connections', { skip: KEYTAR_SKIP }, () => {
  let fx: HostFixture;
  let provider: OAuthFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let controlUrl: string;
  let adminToken: string;
  const keychainService = `persona-machine-e2e-${process.pid}`;
  const env = { WORKSPACE_SECRET_STORE: 'keychain', WORKSPACE_KEYCHAIN_SERVICE: keychainService, WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' };
  /** Every answer and CLI output, to search for secrets at the end. */
  const seen: string[] = [];
  const keys: string[] = [];
  let name: string;

  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await callApi(controlUrl, adminToken, method, path, body);
    seen.push(answer.text);
    return answer;
  };
  const at = (path: string) => `${path}?workspace_path=${encodeURIComponent(PLACE)}`;
  const view = async () => (await api('GET', at(`/mcp/place/${name}`))).json.connection;

  /** The built CLI on the host's state and keychain, as the owner runs it in a terminal. */
  function cli(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
          WORKSPACE_REGISTRY_URL: '',
          WORKSPACE_STATE_DIR: fx.stateDir,
          WORKSPACE_CWD: workspace.dir,
          ...env,
        },
      });
      child.stdin.end(stdin);
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject).on('close', (code) => {
        seen.push(stdout, stderr);
        resolve({ code, stdout, stderr });
      });
    });
  }

  async function whoami(): Promise<{ sub?: string; client?: string }> {
    const url = new URL(fx.url);
    url.searchParams.set('workspace_path', PLACE);
    const agent = new Client({ name: 'agent', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fx.token()}` } } }),
    );
    try {
      const result = (await agent.callTool({ name: `${name}__whoami`, arguments: {} })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result));
      return JSON.parse(textOf(result)) as { sub?: string; client?: string };
    } finally {
      await agent.close();
    }
  }

  async function keyPair(alg: 'ES256' | 'EdDSA'): Promise<{ privateKey: string; publicKey: Awaited<ReturnType<typeof exportJWK>> }> {
    const pair = await generateKeyPair(alg, { extractable: true });
    const privateKey = await exportPKCS8(pair.privateKey);
    keys.push(privateKey);
    return { privateKey, publicKey: { ...(await exportJWK(pair.publicKey)), alg } };
  }

  before(async () => {
    workspace = await enterWorkspace('pw-machine-', [PLACE]);
    // No browser at all: a sign-in page opened anywhere would fail this test.
    process.env.BROWSER = '/bin/false';
    provider = await startOAuthFixture({ accessTokenTtlSeconds: 3 });
    await provider.addMachineClient({ clientId: 'robot', clientSecret: SECRET });
    fx = await startHost({}, env);
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    const added = await api('POST', '/mcp/place', { workspace_path: PLACE, server: { url: provider.mcpUrl, name: 'Tracker' } });
    assert.equal(added.status, 201, added.text);
    name = added.json.connection.name;
    assert.equal(added.json.connection.state, 'sign-in');
  });

  after(async () => {
    delete process.env.BROWSER;
    await fx?.close();
    await provider?.close();
    const keychain = new KeychainSecretStore({ service: keychainService });
    for (const account of await keychain.accounts('')) await keychain.delete(account);
    await workspace?.leave();
  });

  it('logs in with a client secret as soon as it is set, with no browser, and the agent calls as that client', async () => {
    const set = await api('PATCH', at(`/mcp/place/${name}`), { client_credentials: { client_id: 'robot', client_secret: SECRET } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.json.connection.state, 'connected', set.text);
    assert.deepEqual(set.json.connection.clientCredentials, { clientId: 'robot', method: 'client_secret' });
    assert.ok(provider.counters.clientCredentialsGrants >= 1, 'logged in with the grant');
    assert.equal(provider.counters.codeExchanges + provider.counters.registrations, 0, 'no browser sign-in, no registration');
    assert.deepEqual(await whoami(), { client: 'robot' });
  });

  it('gets a new token of the grant when the last one expires', async () => {
    const grants = provider.counters.clientCredentialsGrants;
    await new Promise((r) => setTimeout(r, 3_500));
    assert.deepEqual(await whoami(), { client: 'robot' });
    assert.ok(provider.counters.clientCredentialsGrants > grants, 'a new token was fetched with the credentials');
    assert.equal((await view()).state, 'connected');
  });

  it('refuses credentials the provider refuses, saying so, and keeps the ones that work', async () => {
    const refused = await api('PATCH', at(`/mcp/place/${name}`), {
      client_credentials: { client_id: 'robot', client_secret: 'not-the-secret-77' },
    });
    assert.equal(refused.status, 502, refused.text);
    assert.match(
      refused.json.error.message,
      /^Tracker refused the client credentials: .*Check the client ID and the secret or key, and set them again\.$/,
    );
    assert.doesNotMatch(refused.text, /not-the-secret-77/);
    const kept = await view();
    assert.deepEqual(kept.clientCredentials, { clientId: 'robot', method: 'client_secret' });
    assert.deepEqual(await whoami(), { client: 'robot' });
  });

  it('refuses a private key that cannot sign, before asking anyone, without quoting it', async () => {
    const grants = provider.counters.clientCredentialsGrants;
    const bad = 'not a key at all, just words 9c1e';
    const refused = await api('PATCH', at(`/mcp/place/${name}`), { client_credentials: { client_id: 'signer', private_key: bad } });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.error.message, /not a PKCS #8 PEM key for ES256/);
    assert.doesNotMatch(refused.text, /9c1e/);
    assert.equal(provider.counters.clientCredentialsGrants, grants);
    assert.deepEqual((await view()).clientCredentials, { clientId: 'robot', method: 'client_secret' });
  });

  it('logs in with a private key that signs JWT assertions (ES256 by default, EdDSA when named)', async () => {
    for (const [clientId, alg] of [
      ['signer-es', 'ES256'],
      ['signer-ed', 'EdDSA'],
    ] as const) {
      const { privateKey, publicKey } = await keyPair(alg);
      await provider.addMachineClient({ clientId, publicKey });
      const set = await api('PATCH', at(`/mcp/place/${name}`), {
        client_credentials: { client_id: clientId, private_key: privateKey, ...(alg !== 'ES256' && { signing_algorithm: alg }) },
      });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.json.connection.state, 'connected', set.text);
      assert.deepEqual(set.json.connection.clientCredentials, { clientId, method: 'private_key_jwt' });
      assert.deepEqual(await whoami(), { client: clientId });
    }
  });

  it("keeps the secret or key in the keychain with the connection's login, nowhere else", async () => {
    const keychain = new KeychainSecretStore({ service: keychainService });
    const accounts = (await keychain.accounts('connection:')).filter((a) => a.includes(name));
    const values = await Promise.all(accounts.map((a) => keychain.get(a)));
    assert.ok(
      values.some((v) => v?.includes(JSON.stringify(keys.at(-1)).slice(1, -1))),
      "the last key is in the connection's keychain record",
    );
    assert.ok(!values.some((v) => v?.includes(SECRET)), 'the secret set before the key is gone');
    const files = await Promise.all((await filesUnder(fx.stateDir)).map((f) => readFile(f, 'latin1')));
    for (const text of files) assert.ok(!text.includes('BEGIN PRIVATE KEY') && !text.includes(SECRET), 'no secret or key in a state file');
  });

  it('sets them from the CLI, the secret from stdin, and shows only the client ID', async () => {
    const edited = await cli(
      ['connections', 'edit', name, '--workspace-path', PLACE, '--client-credentials', 'robot', '--client-secret-stdin'],
      `${SECRET}\n`,
    );
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stdout, /^Changed Tracker \(u[0-9a-f]{8}__[a-z0-9-]+\): connected \(2 tools/);
    const shown = await cli(['connections', 'show', name, '--workspace-path', PLACE]);
    assert.match(shown.stdout, /\n {2}logs in with the client credentials robot, with a client secret\n/);
    // The running server takes the CLI's change from the state file and checks the connection again.
    await waitFor(async () => (await view()).state === 'connected', 15_000, 'the running server to log in with the new credentials');
    assert.deepEqual(await whoami(), { client: 'robot' });
    const empty = await cli([
      'connections',
      'edit',
      name,
      '--workspace-path',
      PLACE,
      '--client-credentials',
      'robot',
      '--private-key-stdin',
    ]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--private-key-stdin reads the private key from stdin, which was empty/);
  });

  it('goes back to the browser with null: the credentials are forgotten', async () => {
    const dropped = await api('PATCH', at(`/mcp/place/${name}`), { client_credentials: null });
    assert.equal(dropped.status, 200, dropped.text);
    assert.equal(dropped.json.connection.clientCredentials, undefined);
    assert.equal(dropped.json.connection.state, 'sign-in');
    const keychain = new KeychainSecretStore({ service: keychainService });
    const values = await Promise.all((await keychain.accounts('connection:')).map((a) => keychain.get(a)));
    assert.ok(!values.some((v) => v?.includes(SECRET)), 'the secret left the keychain');
    await waitFor(async () => (await view()).state === 'sign-in', 5_000, 'the connection to ask for a sign-in');
  });

  it("never shows a secret or key in an answer, the CLI's output or the log", () => {
    const haystack = [...seen, fx.logs.join('\n')].join('\n');
    assert.ok(!haystack.includes(SECRET), 'the client secret leaked');
    for (const key of keys) assert.ok(!haystack.includes(key.split('\n')[1]!), 'a private key leaked');
  });
});
