import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SUITE, suiteNode } from '../test/support/conformance-suite.js';
import { enterWorkspace, startHost, type HostFixture } from '../test/support/host-fixture.js';

// The official MCP conformance suite's client auth scenarios, with the product as the client: for
// each, the suite starts an authorization server and an MCP server on loopback and runs
// e2e/fixtures/conformance-client.sh, which adds that server to a place of this host through the
// page's API, connects it (the host opens the sign-in with $BROWSER: a script that follows the
// redirects; the suite's authorization server approves by itself), then calls its tools as an agent
// through /mcp, signing in again when the server asks for wider access (step-up).

const CLIENT = fileURLToPath(new URL('./fixtures/conformance-client.sh', import.meta.url));
const BROWSER = fileURLToPath(new URL('./fixtures/oauth-browser.sh', import.meta.url));
/** The client ID metadata document URL the suite's auth/basic-cimd scenario expects as client_id (it does not fetch it). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

const SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/resource-mismatch',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-basic',
  'auth/client-credentials-jwt',
];

/** Scenarios of grants the product does not offer, each with why. */
const NOT_OFFERED: Record<string, string> = {
  'auth/cross-app-access-complete-flow':
    "enterprise-managed authorization (SEP-990) starts from the person's ID token at their company's identity provider, exchanged there for a grant: " +
    'this app has no enterprise single sign-on of its own to hold one; connections sign in in the browser or with client credentials',
};

// A few scenarios at a time: each mostly waits (process starts, sign-in redirects, checks), and each adds its own server.
describe(
  'the official MCP conformance suite, client auth scenarios, with the product as the client',
  { concurrency: 4, timeout: 900_000 },
  () => {
    let suiteNodePath: string;
    let fx: HostFixture;
    let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
    let env: NodeJS.ProcessEnv;

    before(async () => {
      suiteNodePath = suiteNode();
      workspace = await enterWorkspace('pw-conformance-', ['Crew/conformance']);
      process.env.BROWSER = BROWSER;
      fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_CLIENT_METADATA_URL: CLIENT_METADATA_URL });
      env = {
        ...process.env,
        CONFORMANCE_CONTROL_URL: await fx.host.open(),
        CONFORMANCE_ADMIN_TOKEN: await fx.host.adminToken(),
        CONFORMANCE_MCP_URL: fx.url,
        CONFORMANCE_AGENT_TOKEN: await fx.token('conformance'),
        CONFORMANCE_PLACE: 'Crew/conformance',
      };
    });
    after(async () => {
      delete process.env.BROWSER;
      await fx.close();
      await workspace.leave();
    });

    it('lists every client auth scenario of the suite as run or not offered', async () => {
      const { stdout } = await promisify(execFile)(suiteNodePath, [SUITE, 'list'], { timeout: 30_000 });
      const listed = [...stdout.matchAll(/^\s*-\s*(auth\/\S+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1]);
      assert.deepEqual(listed.sort(), [...SCENARIOS, ...Object.keys(NOT_OFFERED)].sort());
    });

    for (const scenario of SCENARIOS) {
      it(`passes ${scenario}`, async () => {
        const run = await promisify(execFile)(
          suiteNodePath,
          [SUITE, 'client', '--command', CLIENT, '--scenario', scenario, '--timeout', '120000'],
          { env, timeout: 180_000 },
        ).catch((error: { stdout: string; stderr: string }) => error);
        const text = `${run.stdout}\n${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, '');
        const result = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(text);
        assert.ok(result, `no result line in:\n${text}`);
        const [, passed, total, failed, warnings] = result;
        assert.equal(failed, '0', text);
        assert.equal(warnings, '0', text);
        assert.ok(Number(total) > 0 && passed === total, text);
        // Also fails when the client command failed, except where the scenario expects it to stop (a refused resource, too many step-ups).
        assert.match(text, /OVERALL: PASSED/, text);
      });
    }
  },
);
