import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { finishSignIn, MemoryOAuthProvider, openAuthorization, pollWait, startSignIn } from '../test/support/oauth-client.js';

// The built bin, as a headless owner runs it next to the server.
const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const REDIRECT = 'http://127.0.0.1:8766/callback';

/** The SDK client signs in; the owner answers from the terminal with approve / deny, and ends it with clients revoke. */
describe('agent sign-in answered from the CLI', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;

  before(async () => {
    workspace = await enterWorkspace('pw-oauth-cli-', ['Crew/alpha']);
    fx = await startHost();
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
  });

  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, WORKSPACE_STATE_DIR: fx.stateDir, WORKSPACE_CWD: workspace.dir, WORKSPACE_SECRET_STORE: 'file', WORKSPACE_REGISTRY_URL: '' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Starts the SDK's sign-in for the place Crew/alpha; returns the waiting page and the code the owner sees. */
  async function begin(provider: MemoryOAuthProvider): Promise<{ waitUrl: string; code: string }> {
    const waitUrl = await openAuthorization(await startSignIn(provider, `${fx.url}?workspace_path=Crew/alpha`));
    const page = await (await fetch(waitUrl)).text();
    const code = /[A-Z2-9]{4}-[A-Z2-9]{4}/.exec(page)![0];
    const listed = await cli(['approve']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${code}  ${provider.clientName}  place: Crew alpha  answer goes to ${REDIRECT}`));
    return { waitUrl, code };
  }

  it('approves with "approve CODE", after which the client calls bash in the approved place', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, 'CLI-approved agent');
    const { waitUrl, code } = await begin(provider);
    const approved = await cli(['approve', code.toLowerCase()]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /Approved CLI-approved agent .* in Crew alpha/);
    const answer = (await pollWait(waitUrl))!;
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    await finishSignIn(provider, `${fx.url}?workspace_path=Crew/alpha`, answer.searchParams.get('code')!);

    const client = new Client({ name: 'cli-approved', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(fx.url), { authProvider: provider });
    await client.connect(transport);
    assert.match(textOf(await client.callTool({ name: 'bash', arguments: { command: 'echo via-oauth' } })), /via-oauth/);
    await waitFor(async () => /"client":"CLI-approved agent","place":"Crew\/alpha"/.test(await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')), 5_000, 'the audit record');

    const listed = await cli(['clients', 'list']);
    const line = listed.stdout.split('\n').find((l) => l.includes('CLI-approved agent'))!;
    assert.match(line, /place: Crew alpha/);
    const id = line.split(' ')[0]!;
    const revoked = await cli(['clients', 'revoke', id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await assert.rejects(client.callTool({ name: 'bash', arguments: { command: 'echo after-revoke' } }));
    assert.match((await cli(['clients', 'list'])).stdout, new RegExp(`${id} .*revoked`));
    await client.close().catch(() => {});
  });

  it('refuses with "deny CODE": the browser goes back with access_denied', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, 'CLI-denied agent');
    const { waitUrl, code } = await begin(provider);
    const denied = await cli(['deny', code]);
    assert.equal(denied.code, 0, denied.stderr);
    const answer = (await pollWait(waitUrl))!;
    assert.equal(answer.searchParams.get('error'), 'access_denied');
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    const late = await cli(['approve', code]);
    assert.notEqual(late.code, 0);
    assert.match(late.stderr, /already denied/);
  });
});
