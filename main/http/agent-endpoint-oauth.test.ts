import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHost, textOf, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { finishSignIn, MemoryOAuthProvider, openAuthorization, pollWait, startSignIn } from '../../test/support/oauth-client.js';
import { raw } from '../../test/support/raw-http.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';

describe('agent endpoint as an OAuth protected resource and authorization server', () => {
  let fx: HostFixture;
  let origin: string;

  before(async () => {
    fx = await startHost();
    origin = new URL(fx.url).origin;
  });
  after(() => fx.close());

  /** The SDK client's sign-in, answered by `decide` (given the request's code); returns where the browser was sent. */
  async function signIn(provider: MemoryOAuthProvider, decide: (code: string) => Promise<unknown>, serverUrl = fx.url): Promise<URL> {
    const waitUrl = await openAuthorization(await startSignIn(provider, serverUrl));
    assert.equal(await pollWait(waitUrl), undefined, 'nothing is decided before the owner answers');
    const signIns = await fx.host.agentAuthorization();
    const request = (await signIns.pending()).find((r) => r.clientId === provider.client?.client_id);
    assert.ok(request, 'the request waits for the owner');
    await decide(request.code);
    const answer = await pollWait(waitUrl);
    assert.ok(answer);
    return answer;
  }

  async function approved(name = 'Test agent', place = ''): Promise<MemoryOAuthProvider> {
    const provider = new MemoryOAuthProvider(REDIRECT, name);
    const signIns = await fx.host.agentAuthorization();
    const answer = await signIn(provider, (code) => signIns.decide(code, 'approved', 'local', place));
    assert.equal(answer.searchParams.get('state'), provider.sentState, 'state comes back unchanged');
    await finishSignIn(provider, fx.url, answer.searchParams.get('code')!);
    return provider;
  }

  it('answers a request without a token with 401 and where to sign in', async () => {
    const res = await raw(`${fx.url}?workspace_path=Crew/a`, { body: '{}' });
    assert.equal(res.status, 401);
    assert.match(
      String(res.headers['www-authenticate']),
      new RegExp(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp\\?workspace_path=Crew/a"`),
    );
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const metadata = (await (await fetch(`${origin}${path}`)).json()) as { resource: string; authorization_servers: string[] };
      assert.equal(metadata.resource, fx.url);
      assert.deepEqual(metadata.authorization_servers, [origin]);
    }
    // The resource exactly as the client's URL has it (RFC 9728 §3.3), escaped or not.
    for (const query of ['?workspace_path=Crew/a', '?workspace_path=Crew%2Fa', '?workspace_path=Crew/a%20b']) {
      const metadata = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp${query}`)).json()) as { resource: string };
      assert.equal(metadata.resource, `${fx.url}${query}`);
    }
    const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(as.issuer, origin);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.equal(as.registration_endpoint, `${origin}/register`);
  });

  it('signs the SDK client in once the owner approves, and it calls bash in the approved place; the audit names it', async () => {
    const provider = await approved('Audited agent');
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(fx.url), { authProvider: provider }));
    const result = await client.callTool({ name: 'bash', arguments: { command: 'echo signed-in' } });
    assert.match(textOf(result), /signed-in/);
    await client.close();
    await waitFor(
      async () => (await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')).includes('"client":"Audited agent"'),
      5_000,
      'the audit record',
    );
    const listed = (await (await fx.host.agentAuthorization()).signedIn()).find((c) => c.name === 'Audited agent');
    assert.ok(listed?.lastUsedAt);
  });

  it('sends the browser back with access_denied and the state when the owner denies', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, 'Denied agent');
    const signIns = await fx.host.agentAuthorization();
    const answer = await signIn(provider, (code) => signIns.decide(code, 'denied', 'local'));
    assert.equal(answer.searchParams.get('error'), 'access_denied');
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    assert.equal(answer.searchParams.get('code'), null);
    assert.equal(await pollWait(answer.href).catch(() => 'refused'), 'refused');
  });

  it("ends a revoked client's session at once and refuses its refresh token", async () => {
    const provider = await approved('Revoked agent');
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(fx.url), { authProvider: provider });
    await client.connect(transport);
    const signIns = await fx.host.agentAuthorization();
    const grant = (await signIns.signedIn()).find((c) => c.name === 'Revoked agent')!;
    await signIns.revokeGrant(grant.id);
    const res = await raw(fx.url, {
      headers: { Authorization: `Bearer ${provider.saved!.access_token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(res.status, 401);
    assert.match(res.body, /revoked/);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: provider.saved!.refresh_token!,
      client_id: provider.client!.client_id,
    });
    assert.equal(refreshed.status, 400);
    assert.equal(refreshed.json.error, 'invalid_grant');
    await client.close().catch(() => {});
  });

  async function tokenRequest(body: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(`${origin}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }
});
