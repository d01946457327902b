import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SUITE, suiteNode } from '../test/support/conformance-suite.js';
import { enterWorkspace, startHost, type HostFixture } from '../test/support/host-fixture.js';
import { startConformanceClients } from './fixtures/conformance-client.js';

// The official MCP conformance suite's client auth scenarios, with the product as the client: for
// each, the suite starts an authorization server and an MCP server on loopback and runs
// e2e/fixtures/conformance-client.sh, whose client (conformance-client.ts, run in this process)
// adds that server to a place of this host through the page's API, connects it (the host opens the
// sign-in with $BROWSER: a script that follows the redirects; the suite's authorization server
// approves by itself), then calls its tools as an agent through /mcp, signing in again when the
// server asks for wider access (step-up).

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

/**
 * How the suite is run to cover SCENARIOS: its own suites that hold them (the 2025-11-25 ones, the
 * 2025-03-26 ones, the drafts), and alone the extensions' scenarios that are offered. In two rounds,
 * the runs of a round at once: the first runs 14 scenarios at once, the second 7.
 */
const ROUNDS = [
  [['--suite', 'auth']],
  [
    ['--suite', 'backcompat'],
    ['--suite', 'draft'],
    ['--scenario', 'auth/client-credentials-basic'],
    ['--scenario', 'auth/client-credentials-jwt'],
  ],
];

/** Scenarios where the suite expects the client to stop with an error (its allowClientError): a refused resource, too many step-ups. */
const CLIENT_MAY_FAIL = new Set(['auth/resource-mismatch', 'auth/scope-retry-limit']);

interface Check {
  status: string;
}

// The suite runs the suites of its own that hold the client auth scenarios, each with all of its
// scenarios at once (a process of the suite for each of these rather than for each scenario: each
// costs a second of CPU to start); each scenario's own checks, and the exit code of its client, are
// then read back and judged here one by one.
describe('the official MCP conformance suite, client auth scenarios, with the product as the client', { timeout: 900_000 }, () => {
  let suiteNodePath: string;
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let results: string;
  let suiteOutput: string;
  let clients: Awaited<ReturnType<typeof startConformanceClients>> | undefined;

  before(async () => {
    suiteNodePath = suiteNode();
    workspace = await enterWorkspace('pw-conformance-', ['Crew/conformance']);
    process.env.BROWSER = BROWSER;
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_CLIENT_METADATA_URL: CLIENT_METADATA_URL });
    results = await mkdtemp(join(tmpdir(), 'pw-conformance-results-'));
    clients = await startConformanceClients({
      controlUrl: await fx.host.open(),
      adminToken: await fx.host.adminToken(),
      mcpUrl: fx.url,
      agentToken: await fx.token('conformance'),
      place: 'Crew/conformance',
    });
    const env = { ...process.env, CONFORMANCE_CLIENT_URL: clients.url, CONFORMANCE_EXIT_DIR: join(results, 'exit-codes') };
    await mkdir(env.CONFORMANCE_EXIT_DIR);
    // A failing scenario makes its run exit with 1: judged below, scenario by scenario.
    const runs: Array<{ stdout: string; stderr: string }> = [];
    for (const round of ROUNDS) {
      const ran = round.map((which) =>
        promisify(execFile)(
          suiteNodePath,
          [SUITE, 'client', '--command', CLIENT, ...which, '--timeout', '120000', '--output-dir', join(results, 'checks')],
          { env, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
        ).catch((error: { stdout: string; stderr: string }) => error),
      );
      runs.push(...(await Promise.all(ran)));
    }
    suiteOutput = runs.map((run) => `${run.stdout}\n${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, '')).join('\n');
  });
  after(async () => {
    delete process.env.BROWSER;
    await clients?.close();
    await fx?.close();
    await workspace?.leave();
    if (results) await rm(results, { recursive: true, force: true });
  });

  /** What the suite saved of a scenario: its checks, and its client's output. */
  async function saved(scenario: string): Promise<{ checks: Check[]; output: string }> {
    // Saved in <scenario>-<time>/ (the scenario's own slash making a folder).
    const [folder, name] = scenario.split('/') as [string, string];
    const runs = (await readdir(join(results, 'checks', folder))).filter(
      (entry) => entry.startsWith(name) && /^-\d{4}-\d\d-\d\dT[\d-]+Z$/.test(entry.slice(name.length)),
    );
    assert.equal(runs.length, 1, `one run of ${scenario} saved, in ${runs.join(', ')}`);
    const dir = join(results, 'checks', folder, runs[0]!);
    const read = (file: string) => readFile(join(dir, file), 'utf8');
    return { checks: JSON.parse(await read('checks.json')) as Check[], output: `${await read('stdout.txt')}\n${await read('stderr.txt')}` };
  }

  it('lists every client auth scenario of the suite as run or not offered, and ran each of the first once', async () => {
    const { stdout } = await promisify(execFile)(suiteNodePath, [SUITE, 'list'], { timeout: 30_000 });
    const listed = [...stdout.matchAll(/^\s*-\s*(auth\/\S+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1]);
    assert.deepEqual(listed.sort(), [...SCENARIOS, ...Object.keys(NOT_OFFERED)].sort());
    const ran = [...suiteOutput.matchAll(/^Starting scenario: (auth\/\S+)$/gm)].map((m) => m[1]);
    assert.deepEqual(ran.sort(), [...SCENARIOS].sort(), suiteOutput);
    // A client the suite stopped at its timeout fails its scenario, whatever the checks say.
    assert.doesNotMatch(suiteOutput, /Client timed out/, suiteOutput);
  });

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const { checks, output } = await saved(scenario);
      const count = (status: string) => checks.filter((c) => c.status === status).length;
      const detail = `${JSON.stringify(checks, null, 1)}\n${output}`;
      assert.equal(count('FAILURE'), 0, detail);
      assert.equal(count('WARNING'), 0, detail);
      assert.ok(count('SUCCESS') > 0, detail);
      // Its client ended (a client the suite stopped leaves no exit code), and ended well, except where the scenario expects it to stop.
      const code = await readFile(join(results, 'exit-codes', scenario.replace('/', '_')), 'utf8').catch(() => 'none');
      if (!CLIENT_MAY_FAIL.has(scenario) || code === 'none') assert.equal(code, '0', `the client's exit code\n${detail}`);
    });
  }
});
