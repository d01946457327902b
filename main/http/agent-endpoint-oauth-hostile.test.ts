import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { pollWait } from '../../test/support/oauth-client.js';
import { raw } from '../../test/support/raw-http.js';

const REDIRECT = 'http://127.0.0.1:8765/callback';

interface Json {
  status: number;
  json: Record<string, unknown>;
}

/** Hostile and careless clients against the authorization server: each case must be refused and change nothing. */
describe('OAuth sign-in refuses hostile input', () => {
  let fx: HostFixture;
  let origin: string;
  let clientId: string;
  let otherClientId: string;

  before(async () => {
    fx = await startHost();
    origin = new URL(fx.url).origin;
    clientId = String((await register({ client_name: 'Hostile test', redirect_uris: [REDIRECT] })).json.client_id);
    otherClientId = String((await register({ client_name: 'Other client', redirect_uris: [REDIRECT] })).json.client_id);
  });
  after(() => fx.close());

  async function register(body: unknown): Promise<Json> {
    const res = await fetch(`${origin}/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  function pkce(): { verifier: string; challenge: string } {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  async function authorize(params: Record<string, string | undefined>): Promise<Response> {
    const query = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
    return fetch(`${origin}/authorize?${query}`, { redirect: 'manual' });
  }

  /** A full sign-in approved by the owner, up to the code; returns the code and the verifier. */
  async function approvedCode(
    options: { client?: string; redirect?: string; state?: string } = {},
  ): Promise<{ code: string; verifier: string; redirect: URL }> {
    const { verifier, challenge } = pkce();
    const client = options.client ?? clientId;
    const res = await authorize({
      response_type: 'code',
      client_id: client,
      redirect_uri: options.redirect ?? REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: options.state ?? 'st',
      resource: fx.url,
    });
    assert.equal(res.status, 303, await res.clone().text());
    const waitUrl = new URL(res.headers.get('location')!, origin).href;
    const signIns = await fx.host.agentAuthorization();
    const request = (await signIns.pending()).find((r) => r.clientId === client && r.codeChallenge === challenge)!;
    await signIns.decide(request.code, 'approved', 'local', '');
    const redirect = (await pollWait(waitUrl))!;
    return { code: redirect.searchParams.get('code')!, verifier, redirect };
  }

  async function token(body: Record<string, string>): Promise<Json> {
    const res = await fetch(`${origin}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async function exchange(code: string, verifier: string, client = clientId, extra: Record<string, string> = {}): Promise<Json> {
    return token({
      grant_type: 'authorization_code',
      client_id: client,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: fx.url,
      ...extra,
    });
  }

  async function toolsList(accessToken: string, host?: string): Promise<number> {
    const headers: Record<string, string> = { Authorization: `Bearer ${accessToken}` };
    if (host) headers.Host = host;
    return (
      await raw(fx.url, {
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      })
    ).status;
  }

  const pending = async () => (await (await fx.host.agentAuthorization()).pending()).length;

  for (const [what, uri] of [
    ['a javascript: redirect URI', 'javascript:alert(document.cookie)'],
    ['a data: redirect URI', 'data:text/html,<script>alert(1)</script>'],
    ['a plain-http redirect URI to another machine', 'http://evil.example/callback'],
    ['a redirect URI with a fragment', 'https://app.example/cb#x'],
    ['a redirect URI with a terminal escape sequence', 'http://127.0.0.1:8765/cb\u001b]0;pwned\u0007'],
    ['a redirect URI with a space', 'http://127.0.0.1:8765/c b'],
  ] as const) {
    it(`refuses to register ${what}`, async () => {
      const res = await register({ client_name: 'x', redirect_uris: [uri] });
      assert.equal(res.status, 400);
      assert.equal(res.json.error, 'invalid_client_metadata');
    });
  }

  it('refuses a redirect URI that was not registered, without redirecting to it', async () => {
    for (const uri of ['https://evil.example/callback', 'http://127.0.0.1:8765/other', 'http://localhost:8765/callback']) {
      const res = await authorize({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: uri,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      });
      assert.equal(res.status, 400, uri);
      assert.equal(res.headers.get('location'), null);
    }
    assert.equal(await pending(), 0);
  });

  it('refuses, with a page and before the owner is asked, a redirect URI that only looks like the registered one', async () => {
    for (const uri of [
      'http://anthropic.com:443@127.0.0.1:8765/callback',
      'http://anthropic.com@127.0.0.1:40123/callback',
      `${REDIRECT}#x`,
      `${REDIRECT}#`,
      'http://127.0.0.1:40123/callback#x',
      'http://127.0.0.1:8765/callback/',
      'http://127.0.0.1:8765/callback?x=1',
    ]) {
      // Even with other parameters wrong (which would otherwise be answered at the redirect URI).
      const res = await authorize({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: uri,
        code_challenge: 'abc',
        code_challenge_method: 'plain',
        state: 's',
      });
      assert.equal(res.status, 400, uri);
      assert.equal(res.headers.get('location'), null, uri);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const page = await res.text();
      assert.match(page, /This sign-in cannot start/, uri);
      assert.match(page, /not one of the redirect URIs this client registered|not a redirect URI this server accepts/, uri);
    }
    assert.equal(await pending(), 0);
  });

  it('refuses a sign-in that names its client or redirect URI twice, with a page', async () => {
    for (const query of [
      `client_id=${clientId}&client_id=${otherClientId}&redirect_uri=${encodeURIComponent(REDIRECT)}`,
      `client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    ]) {
      const res = await fetch(
        `${origin}/authorize?${query}&response_type=code&code_challenge=${pkce().challenge}&code_challenge_method=S256`,
        { redirect: 'manual' },
      );
      assert.equal(res.status, 400, query);
      assert.equal(res.headers.get('location'), null);
      assert.match(await res.text(), /sent more than once/);
    }
    assert.equal(await pending(), 0);
  });

  it('accepts the registered loopback redirect on another port (RFC 8252)', async () => {
    const { code } = await approvedCode({ redirect: 'http://127.0.0.1:40123/callback' });
    assert.ok(code);
  });

  it('refuses a sign-in without PKCE, or with plain PKCE, and returns the state unchanged', async () => {
    const state = 'a state with spaces & symbols=/?';
    for (const params of [{}, { code_challenge: 'abc', code_challenge_method: 'plain' }, { code_challenge: pkce().challenge }]) {
      const res = await authorize({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state, ...params });
      assert.equal(res.status, 302);
      const location = new URL(res.headers.get('location')!);
      assert.equal(location.searchParams.get('error'), 'invalid_request');
      assert.equal(location.searchParams.get('state'), state);
      // In words a person can act on, not a validator's report.
      const description = location.searchParams.get('error_description') ?? '';
      assert.match(description, /PKCE with S256 is required/);
      assert.doesNotMatch(description, /[[{]/);
    }
    assert.equal(await pending(), 0);
  });

  it('answers malformed token and registration requests in plain words', async () => {
    const { code } = await approvedCode();
    const noVerifier = await token({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: REDIRECT });
    assert.equal(noVerifier.json.error, 'invalid_request');
    assert.equal(noVerifier.json.error_description, 'code_verifier is missing.');
    const noClient = await token({ grant_type: 'refresh_token', refresh_token: 'x' });
    assert.equal(noClient.json.error_description, 'client_id is missing.');
    const badRegistration = await register({ client_name: 'x', redirect_uris: 'http://127.0.0.1:1/cb' });
    assert.equal(badRegistration.json.error, 'invalid_client_metadata');
    assert.equal(badRegistration.json.error_description, 'redirect_uris must be an array.');
    const notJson = await fetch(`${origin}/register`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' });
    assert.equal(notJson.status, 400);
    assert.deepEqual(await notJson.json(), { error: 'invalid_request', error_description: 'The request body is not valid JSON.' });
    const tooLarge = await fetch(`${origin}/authorize`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `state=${'x'.repeat(20_000)}`,
    });
    assert.equal(tooLarge.status, 413);
  });

  it('refuses a sign-in for another resource', async () => {
    const res = await authorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      resource: 'http://other.example/mcp',
    });
    assert.equal(new URL(res.headers.get('location')!).searchParams.get('error'), 'invalid_target');
    assert.equal(await pending(), 0);
  });

  it('returns the state unchanged with the code', async () => {
    const state = 'ünïcode and "quotes" <tags>';
    const { redirect } = await approvedCode({ state });
    assert.equal(redirect.searchParams.get('state'), state);
    assert.equal(`${redirect.origin}${redirect.pathname}`, REDIRECT);
  });

  it('refuses a wrong code verifier', async () => {
    const { code } = await approvedCode();
    const res = await exchange(code, pkce().verifier);
    assert.equal(res.status, 400);
    assert.equal(res.json.error, 'invalid_grant');
  });

  it('refuses a code used by another client', async () => {
    const { code, verifier } = await approvedCode();
    const res = await exchange(code, verifier, otherClientId);
    assert.equal(res.json.error, 'invalid_grant');
  });

  it('refuses a replayed code and revokes what its first use got', async () => {
    const { code, verifier } = await approvedCode();
    const first = await exchange(code, verifier);
    assert.equal(first.status, 200);
    assert.equal(await toolsList(String(first.json.access_token)), 200);
    const second = await exchange(code, verifier);
    assert.equal(second.json.error, 'invalid_grant');
    assert.equal(await toolsList(String(first.json.access_token)), 401);
  });

  it('refuses a code exchanged with another redirect URI or resource', async () => {
    const a = await approvedCode();
    assert.equal(
      (await exchange(a.code, a.verifier, clientId, { redirect_uri: 'http://127.0.0.1:8765/other' })).json.error,
      'invalid_grant',
    );
    const b = await approvedCode();
    assert.equal((await exchange(b.code, b.verifier, clientId, { resource: 'http://other.example/mcp' })).json.error, 'invalid_target');
  });

  it("refuses a refresh token reused after rotation, and ends the client's access", async () => {
    const { code, verifier } = await approvedCode();
    const first = await exchange(code, verifier);
    const rotated = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(first.json.refresh_token) });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.json.refresh_token, first.json.refresh_token);
    const reused = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(first.json.refresh_token) });
    assert.equal(reused.json.error, 'invalid_grant');
    // Both copies are now dead: the thief's and the client's.
    const after = await token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: String(rotated.json.refresh_token) });
    assert.equal(after.json.error, 'invalid_grant');
    // Told the real reason: the owner did nothing.
    assert.match(String(after.json.error_description), /refresh token was used twice/);
    const refused = await raw(fx.url, { headers: { Authorization: `Bearer ${String(rotated.json.access_token)}` }, body: '{}' });
    assert.equal(refused.status, 401);
    assert.match(refused.body, /refresh token was used twice/);
    assert.doesNotMatch(refused.body, /by the machine's owner/);
    assert.match(String(refused.headers['www-authenticate']), /refresh token was used twice/);
  });

  it('refuses a refresh token presented by another client', async () => {
    const { code, verifier } = await approvedCode();
    const first = await exchange(code, verifier);
    assert.equal(
      (await token({ grant_type: 'refresh_token', client_id: otherClientId, refresh_token: String(first.json.refresh_token) })).json.error,
      'invalid_grant',
    );
  });

  it('refuses an access token at another resource (its audience), and on the control plane', async () => {
    const { code, verifier } = await approvedCode();
    const access = String((await exchange(code, verifier)).json.access_token);
    const port = new URL(fx.url).port;
    const res = await raw(fx.url, { headers: { Authorization: `Bearer ${access}`, Host: `localhost:${port}` }, body: '{}' });
    assert.equal(res.status, 401);
    assert.match(res.body, /another resource/);
    const control = await fetch(`${await fx.host.open()}/api/tokens`, { headers: { Authorization: `Bearer ${access}` } });
    assert.equal(control.status, 401);
  });

  it('serves the sign-in pages with framing refused', async () => {
    const { challenge } = pkce();
    const res = await authorize({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const wait = await fetch(new URL(res.headers.get('location')!, origin));
    for (const answer of [res, wait]) {
      assert.match(String(answer.headers.get('content-security-policy')), /frame-ancestors 'none'/);
      assert.equal(answer.headers.get('x-frame-options'), 'DENY');
    }
    const page = await wait.text();
    assert.match(page, /Hostile test/);
    assert.match(page, /[A-Z2-9]{4}-[A-Z2-9]{4}/);
    const signIns = await fx.host.agentAuthorization();
    for (const r of await signIns.pending()) await signIns.decide(r.code, 'denied', 'local');
  });

  it('cuts off registration floods', async () => {
    let status = 0;
    for (let i = 0; i < 25 && status !== 429; i += 1)
      status = (await register({ client_name: `flood ${i}`, redirect_uris: [REDIRECT] })).status;
    assert.equal(status, 429);
  });
});
