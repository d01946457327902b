// ConnectionOAuth against a real authorization server (oidc-provider) protecting a real MCP server,
// with the real OS keychain: sign-in, tools, refresh and rotation, revocation, and the refusals.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { walkSignIn } from '../../../e2e/fixtures/oauth-browser.js';
import { startUpstream } from '../../../e2e/fixtures/upstream-server.js';
import { startOAuthFixture, TEST_USER, type OAuthFixture, type OAuthFixtureOptions } from '../../../e2e/fixtures/oauth-server.js';
import { testClock } from '../../../test/support/clock.js';
import { assertNotInFiles, KEYTAR_SKIP, testKeychain } from '../../../test/support/secrets.js';
import { ConnectionSecrets } from '../../secrets/connection-secrets.js';
import { createGuardedFetch } from '../../network/guarded-fetch.js';
import type { SecretStore } from '../../secrets/secret-store.js';
import { ConnectionOAuth, type ConnectionOAuthOptions, type SignInChange } from './connection-oauth.js';
import {
  OwnAppRequiredError,
  SignInDeniedError,
  SignInFailedError,
  SignInRequiredError,
  SignInStateError,
  SignInUnsupportedError,
  TokenRefreshError,
} from './errors.js';
import type { OAuthRecord } from './oauth-store.js';
import type { CallbackAnswer, OAuthConnection } from './sign-in.js';

// Access tokens last an hour at the provider, so none expires for real during a test; the tests move
// the ConnectionOAuth's clock past the moment it renews one (less than a minute of life left).
const ACCESS_TTL_S = 3600;
const UNTIL_REFRESH_MS = (ACCESS_TTL_S - 30) * 1000;
const BROWSER = fileURLToPath(new URL('../../../e2e/fixtures/oauth-browser.sh', import.meta.url));

const keychain = testKeychain();
const secrets = new ConnectionSecrets(keychain);
let scratch: string;

// Everything secret the tests see, and everything printed or said, for the final search.
const seen = new Set<string>();
const said: string[] = [];
const consoleMethods = ['log', 'info', 'warn', 'error', 'debug'] as const;
const originalConsole = consoleMethods.map((method) => console[method]);

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'oauth-test-'));
  for (const method of consoleMethods) {
    const original = console[method];
    console[method] = (...args: unknown[]) => {
      said.push(args.map(String).join(' '));
      original.apply(console, args);
    };
  }
});
after(async () => {
  consoleMethods.forEach((method, i) => (console[method] = originalConsole[i]!));
  await keychain.clear();
  await rm(scratch, { recursive: true, force: true });
});

interface Harness {
  fixture: OAuthFixture;
  oauth: ConnectionOAuth;
  /** The ConnectionOAuth's clock. */
  clock: ReturnType<typeof testClock>;
  callbackUrl: string;
  changes: SignInChange[];
  close(): Promise<void>;
}

/** The fixture, a ConnectionOAuth, and a stand-in for the control plane's /oauth/callback that calls finish(). */
async function harness(fixtureOptions: OAuthFixtureOptions = {}, options: Partial<ConnectionOAuthOptions> = {}): Promise<Harness> {
  const fixture = await startOAuthFixture({ accessTokenTtlSeconds: ACCESS_TTL_S, ...fixtureOptions });
  let oauth: ConnectionOAuth | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/oauth/callback') {
      res.writeHead(404).end();
      return;
    }
    const answer = Object.fromEntries(url.searchParams) as CallbackAnswer;
    rememberAnswer(answer);
    oauth!.finish(answer).then(
      (connection) => res.writeHead(200).end(`Signed in to ${connection.displayName}.`),
      (error: Error) => {
        said.push(error.message);
        res.writeHead(400).end(error.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/callback`;
  const clock = testClock();
  oauth = new ConnectionOAuth({ secrets, fetch, redirectUrl: () => callbackUrl, now: clock.now, ...options });
  const changes: SignInChange[] = [];
  oauth.onStateChange((change) => changes.push(change));
  return {
    fixture,
    oauth,
    clock,
    callbackUrl,
    changes,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await fixture.close();
    },
  };
}

let connections = 0;
function connectionTo(fixture: OAuthFixture, displayName = 'Fixture'): OAuthConnection {
  connections += 1;
  return { storeId: `oauth-test-${process.pid}-${connections}`, name: 'u0123abcd__fixture', url: fixture.mcpUrl, displayName };
}

function identity(connection: OAuthConnection) {
  return { storeId: connection.storeId, serverName: connection.name };
}

/** The connection's OAuth record as the keychain holds it. */
async function stored(connection: OAuthConnection): Promise<OAuthRecord> {
  const text = await secrets.get(identity(connection), 'oauth');
  const record = (text ? JSON.parse(text) : {}) as OAuthRecord;
  for (const value of [
    record.tokens?.access_token,
    record.tokens?.refresh_token,
    record.client?.information.client_secret,
    record.signIn?.verifier,
    record.signIn?.state,
  ]) {
    if (value) seen.add(value);
  }
  const registrationToken = (record.client?.information as { registration_access_token?: string } | undefined)?.registration_access_token;
  if (registrationToken) seen.add(registrationToken);
  return record;
}

function rememberAnswer(answer: CallbackAnswer): void {
  if (answer.code) seen.add(answer.code);
  if (answer.state) seen.add(answer.state);
}

/** Begins a sign-in and walks the browser up to the callback without opening it; returns the answer. */
async function answerFor(
  h: Harness,
  connection: OAuthConnection,
  options?: Parameters<ConnectionOAuth['begin']>[1],
): Promise<CallbackAnswer> {
  const { authorizationUrl } = await h.oauth.begin(connection, options);
  await stored(connection);
  const walk = await walkSignIn(authorizationUrl, { open: false });
  const answer = Object.fromEntries(walk.callbackUrl.searchParams) as CallbackAnswer;
  rememberAnswer(answer);
  return answer;
}

/** A whole sign-in, the browser opening the callback as a person's would. */
async function signIn(h: Harness, connection: OAuthConnection, options?: Parameters<ConnectionOAuth['begin']>[1]): Promise<void> {
  const { authorizationUrl } = await h.oauth.begin(connection, options);
  await stored(connection);
  const walk = await walkSignIn(authorizationUrl);
  assert.equal(walk.callback?.status, 200, walk.callback?.body);
  await stored(connection);
}

async function mcpClient(h: Harness, connection: OAuthConnection, base: FetchLike = fetch): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(connection.url), { fetch: h.oauth.fetch(connection, base) }));
  return client;
}

async function whoami(client: Client): Promise<{ sub: string; client: string }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  return JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { sub: string; client: string };
}

function echoes(client: Client, count: number) {
  return Promise.allSettled(Array.from({ length: count }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })));
}

/** Asserts `promise` rejects with an error of `type` whose message matches `message`; keeps the message for the final search. */
async function refused(promise: Promise<unknown>, type: new (...args: never[]) => Error, message: RegExp): Promise<Error> {
  const error = await promise.then(
    () => assert.fail(`expected ${type.name}`),
    (e: Error) => e,
  );
  said.push(error.message);
  assert.ok(error instanceof type, `${error.name}: ${error.message}`);
  assert.match(error.message, message);
  return error;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      said.push(stdout, stderr);
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the life of a login', { skip: KEYTAR_SKIP }, () => {
  let h: Harness;
  let connection: OAuthConnection;
  let client: Client;
  let authorizationUrl: URL;
  before(async () => {
    h = await harness();
    connection = connectionTo(h.fixture, 'Fixture Tracker');
  });
  after(async () => {
    await client?.close();
    await h.close();
  });

  it('begin finds the server from the 401 challenge, registers, and returns an authorization URL with PKCE S256, resource, state and scope', async () => {
    authorizationUrl = new URL((await h.oauth.begin(connection)).authorizationUrl);
    const query = Object.fromEntries(authorizationUrl.searchParams);
    const record = await stored(connection);
    assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${h.fixture.issuer}/auth`);
    assert.equal(query.response_type, 'code');
    assert.equal(query.code_challenge_method, 'S256');
    assert.match(query.code_challenge!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(query.resource, h.fixture.mcpUrl);
    assert.equal(query.redirect_uri, h.callbackUrl);
    assert.equal(
      query.scope,
      'mcp:tools mcp:admin offline_access',
      "the resource's scopes_supported, and offline_access which the server offers",
    );
    assert.match(query.state!, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(h.fixture.registeredClientIds(), [query.client_id], 'registered dynamically, once');
    assert.equal(record.client?.source, 'registered');
    assert.equal(record.signIn?.state, query.state);
    assert.ok(record.signIn?.verifier && !authorizationUrl.href.includes(record.signIn.verifier), 'the verifier stays in the keychain');
    assert.equal(record.tokens, undefined);
    assert.equal(await h.oauth.state(connection), 'sign-in');
    assert.equal(h.fixture.counters.metadataRequests[0], h.fixture.resourceMetadataUrl, "the challenge's metadata URL first");
    assert.equal(h.fixture.counters.metadataRequests[1], `${h.fixture.issuer}/.well-known/oauth-authorization-server`);
  });

  it('the browser ($BROWSER) comes back to /oauth/callback: finish stores the tokens in the keychain, drops the verifier and tells the page', async () => {
    const result = await run(BROWSER, [authorizationUrl.href], scratch);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /callback answered HTTP 200/);
    const record = await stored(connection);
    assert.ok(record.tokens?.access_token && record.tokens.refresh_token);
    assert.equal(record.tokens.issuer, h.fixture.issuer);
    assert.equal(record.signIn, undefined);
    assert.equal(record.server?.resource, h.fixture.mcpUrl);
    assert.deepEqual(h.changes, [{ ...identity(connection), state: 'signed-in' }]);
    assert.equal(await h.oauth.state(connection), 'signed-in');
    assert.equal(h.fixture.counters.codeExchanges, 1);
  });

  it("an MCP client with the connection's fetch calls tools as the person who signed in", async () => {
    client = await mcpClient(h, connection);
    const me = await whoami(client);
    assert.deepEqual(me, { sub: TEST_USER, client: h.fixture.registeredClientIds()[0] });
  });

  it('refreshes an expiring token once for 20 calls at once, and uses the new one only once the rotated refresh token is stored', async () => {
    const before = (await stored(connection)).tokens!;
    h.clock.advance(UNTIL_REFRESH_MS);
    const { refreshes, tokenRequests } = h.fixture.counters;
    const accepted = h.fixture.acceptedAccessTokens.length;
    const results = await echoes(client, 20);
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill('fulfilled'),
    );
    assert.equal(h.fixture.counters.refreshes, refreshes + 1);
    assert.equal(h.fixture.counters.tokenRequests, tokenRequests + 1);
    const renewed = (await stored(connection)).tokens!;
    assert.notEqual(renewed.refresh_token, before.refresh_token, 'rotated');
    assert.notEqual(renewed.access_token, before.access_token);
    assert.equal(await h.fixture.isTokenActive(before.refresh_token!), false);
    assert.equal(await h.fixture.isTokenActive(renewed.refresh_token!), true);
    assert.deepEqual(new Set(h.fixture.acceptedAccessTokens.slice(accepted)), new Set([renewed.access_token]));
  });

  it('refreshes once when the server refuses a token before it expires, and sends the calls again', async () => {
    const before = (await stored(connection)).tokens!;
    assert.equal(h.fixture.revokeAllAccessTokens() > 0, true);
    const { refreshes } = h.fixture.counters;
    const results = await echoes(client, 20);
    assert.deepEqual(
      results.map((r) => r.status),
      Array(20).fill('fulfilled'),
    );
    assert.equal(h.fixture.counters.refreshes, refreshes + 1);
    assert.notEqual((await stored(connection)).tokens!.access_token, before.access_token);
  });

  it('a login revoked at the provider ends at the next refresh: one token request, then "sign in" and no retry', async () => {
    const granted = (await stored(connection)).tokens!.scope;
    assert.ok(granted);
    assert.ok(h.fixture.revokeAllRefreshTokens() > 0);
    h.clock.advance(UNTIL_REFRESH_MS);
    const { tokenRequests } = h.fixture.counters;
    const results = await echoes(client, 20);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      const error = (result as PromiseRejectedResult).reason as Error;
      assert.ok(error instanceof SignInRequiredError, String(error));
      assert.match(error.message, /The login of Fixture Tracker has ended at the provider/);
      said.push(error.message);
    }
    assert.equal(h.fixture.counters.tokenRequests, tokenRequests + 1, 'one refresh for all 20 calls');
    assert.equal(await h.oauth.state(connection), 'sign-in');
    assert.deepEqual(h.changes.slice(1), [{ ...identity(connection), state: 'sign-in', ended: 'grant' }], 'the page is told once, and why');
    assert.equal(await h.oauth.loginEnded(connection), 'grant');
    const record = await stored(connection);
    assert.equal(record.tokens, undefined);
    assert.ok(record.client, 'the registration is kept for the next sign-in');
    assert.equal(record.grantedScope, granted, 'and the scope the login had, for the next sign-in to ask for again');
    await refused(client.callTool({ name: 'echo', arguments: { text: 'again' } }), SignInRequiredError, /Fixture Tracker is not signed in/);
    assert.equal(h.fixture.counters.tokenRequests, tokenRequests + 1, 'nothing is retried');
  });

  it('signs in again with the same registration; revokeAndForget revokes at the provider and empties the keychain', async () => {
    await client.close();
    await signIn(h, connection);
    assert.equal(h.fixture.counters.registrations, 1);
    assert.equal((await stored(connection)).grantedScope, undefined, "the new login's scope replaces the ended one's");
    assert.equal(await h.oauth.loginEnded(connection), undefined, 'the new login replaces the ended one');
    client = await mcpClient(h, connection);
    assert.equal((await whoami(client)).sub, TEST_USER);
    const { tokens } = await stored(connection);
    const result = await h.oauth.revokeAndForget(connection);
    assert.deepEqual(result, { revoked: ['refresh_token', 'access_token'], problems: [] });
    assert.equal(h.fixture.counters.revocations, 2);
    assert.equal(await h.fixture.isTokenActive(tokens!.refresh_token!), false);
    assert.equal(await h.fixture.isTokenActive(tokens!.access_token), false);
    assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:${connection.name}:`), []);
    assert.equal(await h.oauth.state(connection), 'sign-in');
    assert.deepEqual(h.changes.at(-1), { ...identity(connection), state: 'sign-in' });
    await refused(client.callTool({ name: 'whoami', arguments: {} }), SignInRequiredError, /not signed in/);
  });
});

describe('sign-in refusals', { skip: KEYTAR_SKIP }, () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  it('refuses a provider whose metadata does not list PKCE S256, registering and storing nothing', async () => {
    const connection = connectionTo(h.fixture);
    h.fixture.setS256(false);
    try {
      await refused(h.oauth.begin(connection), SignInUnsupportedError, /Fixture does not support secure sign-in \(PKCE S256\)/);
    } finally {
      h.fixture.setS256(true);
    }
    assert.equal(h.fixture.counters.registrations, 0);
    assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
  });

  it('refuses an answer with a wrong or missing state and stores nothing; the right one works once', async () => {
    const connection = connectionTo(h.fixture);
    const answer = await answerFor(h, connection);
    await refused(h.oauth.finish({ ...answer, state: 'forged-state' }), SignInStateError, /does not match any sign-in started here/);
    const { state: _state, ...stateless } = answer;
    await refused(h.oauth.finish(stateless), SignInStateError, /has no state/);
    assert.equal(h.fixture.counters.codeExchanges, 0);
    assert.equal((await stored(connection)).tokens, undefined);
    await h.oauth.finish(answer);
    assert.ok((await stored(connection)).tokens);
    await refused(h.oauth.finish(answer), SignInStateError, /already used/);
    assert.equal(h.fixture.counters.codeExchanges, 1);
  });

  it('refuses an answer after ten minutes, storing nothing', async () => {
    const clock = { now: Date.now() };
    const late = await harness({}, { now: () => clock.now });
    try {
      const connection = connectionTo(late.fixture);
      const answer = await answerFor(late, connection);
      clock.now += 10 * 60_000;
      await refused(late.oauth.finish(answer), SignInStateError, /expired: it must be finished within 10 minutes/);
      assert.equal(late.fixture.counters.tokenRequests, 0);
      assert.equal((await stored(connection)).tokens, undefined);
    } finally {
      await late.close();
    }
  });

  it('refuses an answer that names another authorization server (RFC 9207), and one that names none', async () => {
    const connection = connectionTo(h.fixture);
    const answer = await answerFor(h, connection);
    await refused(
      h.oauth.finish({ ...answer, iss: 'https://attacker.example' }),
      SignInStateError,
      /does not come from Fixture's sign-in server/,
    );
    const again = await answerFor(h, connection);
    const { iss: _iss, ...unnamed } = again;
    await refused(h.oauth.finish(unnamed), SignInStateError, /does not come from Fixture's sign-in server/);
    const record = await stored(connection);
    assert.equal(record.tokens, undefined);
    assert.equal(record.signIn, undefined, 'the used sign-in left no verifier');
  });

  it('reports an error answer of the provider in words, and drops the verifier', async () => {
    const connection = connectionTo(h.fixture);
    const exchanges = h.fixture.counters.codeExchanges;
    h.fixture.setConsent('deny');
    try {
      const { authorizationUrl } = await h.oauth.begin(connection);
      const walk = await walkSignIn(authorizationUrl);
      assert.equal(walk.callback?.status, 400);
      assert.match(
        walk.callback!.body,
        /^The sign-in to Fixture was declined \(The test user declined\.\)\. Sign in again and allow access/,
      );
    } finally {
      h.fixture.setConsent('approve');
    }
    await refused(h.oauth.finish({ error: 'access_denied', state: 'unknown' }), SignInStateError, /does not match any sign-in/);
    const cases: Array<[string, RegExp]> = [
      ['temporarily_unavailable', /^Fixture's sign-in server had a problem\. Try again in a few minutes\.$/],
      ['invalid_scope', /^Fixture refused the permissions this connection asks for\. The server may have changed/],
      ['unsupported_response_type', /^Fixture refused the sign-in: unsupported_response_type\. Try again, or check/],
    ];
    for (const [error, words] of cases) {
      const direct = await answerFor(h, connection);
      await refused(h.oauth.finish({ state: direct.state!, iss: direct.iss!, error }), SignInDeniedError, words);
    }
    const record = await stored(connection);
    assert.equal(record.signIn, undefined);
    assert.equal(record.tokens, undefined);
    assert.equal(h.fixture.counters.codeExchanges, exchanges);
  });

  it('refuses an answer with neither a code nor an error', async () => {
    const connection = connectionTo(h.fixture);
    const { state, iss } = await answerFor(h, connection);
    await refused(h.oauth.finish({ state: state!, iss: iss! }), SignInFailedError, /Fixture's sign-in server answered without a code/);
    assert.equal((await stored(connection)).signIn, undefined);
  });

  it('a registration the provider forgot before the code exchange is dropped, so the next sign-in registers anew', async () => {
    const connection = connectionTo(h.fixture);
    const answer = await answerFor(h, connection);
    const forgotten = (await stored(connection)).client!.information.client_id;
    await h.fixture.forgetClient(forgotten);
    await refused(
      h.oauth.finish(answer),
      SignInFailedError,
      /Fixture no longer accepts this app's registration\. Start the sign-in again: the app registers anew/,
    );
    assert.equal((await stored(connection)).client, undefined);
    const registrations = h.fixture.counters.registrations;
    await signIn(h, connection);
    assert.equal(h.fixture.counters.registrations, registrations + 1);
    assert.notEqual((await stored(connection)).client!.information.client_id, forgotten);
  });

  it('a newer sign-in of the same connection replaces the older one', async () => {
    const connection = connectionTo(h.fixture);
    const older = await answerFor(h, connection);
    const newer = await answerFor(h, connection);
    await refused(h.oauth.finish(older), SignInStateError, /A newer sign-in to this connection was started/);
    assert.equal((await stored(connection)).signIn?.state, newer.state, "the newer sign-in's verifier is untouched");
    await h.oauth.finish(newer);
    assert.ok((await stored(connection)).tokens);
  });

  it('a sign-in begun while an older one finishes keeps its verifier, whether the older one succeeds or fails', async () => {
    let during: (() => Promise<void>) | undefined;
    const hooked: FetchLike = async (url, init) => {
      const run = String(url).endsWith('/token') ? during : undefined;
      during = undefined;
      await run?.();
      return fetch(url, init);
    };
    const racing = await harness({}, { fetch: hooked });
    try {
      const connection = connectionTo(racing.fixture);
      let newer: CallbackAnswer | undefined;
      const older = await answerFor(racing, connection);
      during = async () => {
        newer = await answerFor(racing, connection);
      };
      await racing.oauth.finish(older);
      assert.equal((await stored(connection)).signIn?.state, newer!.state);
      const failing = await answerFor(racing, connection);
      during = async () => {
        newer = await answerFor(racing, connection);
      };
      await refused(racing.oauth.finish({ ...failing, code: 'not-a-code' }), SignInFailedError, /refused the sign-in code/);
      assert.equal((await stored(connection)).signIn?.state, newer!.state);
      await racing.oauth.finish(newer!);
      assert.equal((await stored(connection)).signIn, undefined);
    } finally {
      await racing.close();
    }
  });

  it('two sign-ins at once, for different places, never mix', async () => {
    const a = connectionTo(h.fixture, 'Fixture in Crew A');
    const b = connectionTo(h.fixture, 'Fixture in Crew B');
    const [answerA, answerB] = await Promise.all([answerFor(h, a), answerFor(h, b)]);
    // A code presented with the other sign-in's state meets the other verifier and client: refused.
    await refused(
      h.oauth.finish({ ...answerA, code: answerB.code! }),
      SignInFailedError,
      /Could not finish the sign-in to Fixture in Crew A|refused the sign-in code/,
    );
    assert.equal((await stored(a)).tokens, undefined);
    assert.equal((await h.oauth.finish(answerB)).displayName, 'Fixture in Crew B');
    const [recordA, recordB] = [await stored(a), await stored(b)];
    assert.equal(recordA.tokens, undefined);
    assert.ok(recordB.tokens);
    assert.notEqual(recordA.client?.information.client_id, recordB.client?.information.client_id, 'each connection registered on its own');
    await signIn(h, a);
    const clientA = await mcpClient(h, a);
    const clientB = await mcpClient(h, b);
    try {
      assert.equal((await whoami(clientA)).client, (await stored(a)).client?.information.client_id);
      assert.equal((await whoami(clientB)).client, recordB.client?.information.client_id);
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });
});

describe('registration', { skip: KEYTAR_SKIP }, () => {
  it("asks for the person's own OAuth app when the provider lets no app register, then signs in, refreshes and revokes with it", async () => {
    const h = await harness({ registration: false });
    try {
      const connection = connectionTo(h.fixture);
      const ownApp = { clientId: `own-app-${process.pid}`, clientSecret: `own-secret-${process.pid}-${Date.now()}` };
      seen.add(ownApp.clientSecret);
      await h.fixture.addClient({ ...ownApp, redirectUris: [h.callbackUrl] });
      const error = await refused(
        h.oauth.begin(connection),
        OwnAppRequiredError,
        /Fixture does not let apps register by themselves\. Create an OAuth app .* with the redirect URL http:\/\/127\.0\.0\.1:\d+\/oauth\/callback/,
      );
      assert.equal((error as OwnAppRequiredError).redirectUrl, h.callbackUrl);

      const { authorizationUrl } = await h.oauth.begin(connection, { ownApp });
      assert.equal(new URL(authorizationUrl).searchParams.get('client_id'), ownApp.clientId);
      const walk = await walkSignIn(authorizationUrl);
      assert.equal(walk.callback?.status, 200, walk.callback?.body);
      const record = await stored(connection);
      assert.equal(record.client?.source, 'own-app');
      assert.equal(record.client?.information.client_secret, ownApp.clientSecret);
      assert.equal(h.fixture.counters.registrations, 0);

      const client = await mcpClient(h, connection);
      assert.equal((await whoami(client)).client, ownApp.clientId);
      h.clock.advance(UNTIL_REFRESH_MS);
      assert.equal((await whoami(client)).client, ownApp.clientId);
      assert.equal(h.fixture.counters.refreshes, 1, 'refreshed with the app secret');
      await client.close();
      const again = await h.oauth.begin(connection);
      assert.equal(new URL(again.authorizationUrl).searchParams.get('client_id'), ownApp.clientId, 'the app is kept for the next sign-in');
      assert.deepEqual((await h.oauth.revokeAndForget(connection)).revoked, ['refresh_token', 'access_token']);
      await refused(h.oauth.begin(connection), OwnAppRequiredError, /does not let apps register/);
    } finally {
      await h.close();
    }
  });

  it("says so when the provider refuses the own app's secret", async () => {
    const h = await harness({ registration: false });
    try {
      const connection = connectionTo(h.fixture);
      const clientId = `own-app-${process.pid}-wrong`;
      const secret = `right-secret-${Date.now()}`;
      const wrong = `wrong-secret-${Date.now()}`;
      seen.add(secret).add(wrong);
      await h.fixture.addClient({ clientId, clientSecret: secret, redirectUris: [h.callbackUrl] });
      const answer = await answerFor(h, connection, { ownApp: { clientId, clientSecret: wrong } });
      await refused(h.oauth.finish(answer), SignInFailedError, /Fixture refused the client ID or secret of your OAuth app/);
      const record = await stored(connection);
      assert.equal(record.client?.source, 'own-app', 'kept, for the person to correct');
      assert.equal(record.tokens, undefined);
    } finally {
      await h.close();
    }
  });

  it('uses a client ID metadata document when the server supports one and its public URL is set; else registers dynamically', async () => {
    const documentUrl = 'https://persona.example/oauth/client-metadata.json';
    const withDocument = await harness({ clientIdMetadataDocument: true }, { clientMetadataUrl: documentUrl });
    try {
      const connection = connectionTo(withDocument.fixture);
      const { authorizationUrl } = await withDocument.oauth.begin(connection);
      assert.equal(new URL(authorizationUrl).searchParams.get('client_id'), documentUrl);
      assert.equal((await stored(connection)).client?.source, 'metadata-document');
      assert.equal(withDocument.fixture.counters.registrations, 0);
    } finally {
      await withDocument.close();
    }
    const onLoopback = await harness({ clientIdMetadataDocument: true });
    try {
      const connection = connectionTo(onLoopback.fixture);
      await signIn(onLoopback, connection);
      assert.equal(onLoopback.fixture.counters.registrations, 1);
      assert.equal((await stored(connection)).client?.source, 'registered');
    } finally {
      await onLoopback.close();
    }
  });

  it('invalid_client at refresh drops the registration and the login; the next sign-in registers exactly once more', async () => {
    const h = await harness();
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const first = (await stored(connection)).client!.information.client_id;
      const client = await mcpClient(h, connection);
      await h.fixture.forgetClient(first);
      h.clock.advance(UNTIL_REFRESH_MS);
      const { tokenRequests } = h.fixture.counters;
      await refused(
        client.callTool({ name: 'whoami', arguments: {} }),
        SignInRequiredError,
        /Fixture no longer accepts this app's registration/,
      );
      await refused(client.callTool({ name: 'whoami', arguments: {} }), SignInRequiredError, /not signed in/);
      assert.equal(h.fixture.counters.tokenRequests, tokenRequests + 1);
      const record = await stored(connection);
      assert.equal(record.client, undefined);
      assert.equal(record.tokens, undefined);
      assert.ok(record.grantedScope, 'the scope of the ended login is kept for the next sign-in');
      assert.equal(await h.oauth.loginEnded(connection), 'client');
      assert.equal(await h.oauth.state(connection), 'sign-in');
      await client.close();

      await signIn(h, connection);
      assert.equal(h.fixture.counters.registrations, 2);
      const second = (await stored(connection)).client!.information.client_id;
      assert.notEqual(second, first);
      const again = await mcpClient(h, connection);
      assert.equal((await whoami(again)).client, second);
      await again.close();
    } finally {
      await h.close();
    }
  });
});

describe('discovery', { skip: KEYTAR_SKIP }, () => {
  it("asks for the 401 challenge's scope rather than the resource's scopes_supported", async () => {
    const h = await harness({ challengeScope: 'mcp:tools' });
    try {
      const { authorizationUrl } = await h.oauth.begin(connectionTo(h.fixture));
      assert.equal(new URL(authorizationUrl).searchParams.get('scope'), 'mcp:tools offline_access');
    } finally {
      await h.close();
    }
  });

  it("a sign-in again asks for the scope the connection's last login was granted too, however the challenge is narrower", async () => {
    const h = await harness({ challengeScope: 'mcp:tools' });
    try {
      const connection = connectionTo(h.fixture);
      // As a login widened by a step-up leaves it when the provider ends it (TokenKeeper).
      await secrets.set(
        identity(connection),
        'oauth',
        JSON.stringify({ grantedScope: 'mcp:tools mcp:admin offline_access' } satisfies OAuthRecord),
      );
      const { authorizationUrl } = await h.oauth.begin(connection);
      assert.equal(new URL(authorizationUrl).searchParams.get('scope'), 'mcp:tools mcp:admin offline_access');
    } finally {
      await h.close();
    }
  });

  it('finds the resource metadata at the well-known location without a challenge hint, and the server by OpenID discovery without RFC 8414', async () => {
    const h = await harness({ challengeResourceMetadata: false, oauthMetadata: false });
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const { mcpUrl, issuer } = h.fixture;
      const origin = new URL(mcpUrl).origin;
      assert.deepEqual(h.fixture.counters.metadataRequests.slice(0, 3), [
        `${origin}/.well-known/oauth-protected-resource/mcp`,
        `${issuer}/.well-known/oauth-authorization-server`,
        `${issuer}/.well-known/openid-configuration`,
      ]);
      const client = await mcpClient(h, connection);
      assert.equal((await whoami(client)).sub, TEST_USER);
      await client.close();
    } finally {
      await h.close();
    }
  });
});

describe('begin, when the provider does not cooperate', { skip: KEYTAR_SKIP }, () => {
  it('signs in to a server with no metadata at all at the 2025-03-26 defaults, and says why that fails', async () => {
    const plain = await startUpstream({ apiKey: { header: 'X-Api-Key', value: 'not-for-oauth' } });
    const oauth = new ConnectionOAuth({ secrets, fetch, redirectUrl: () => 'http://127.0.0.1:9/oauth/callback' });
    try {
      const connection: OAuthConnection = {
        storeId: `oauth-test-${process.pid}-plain`,
        name: 'u0123abcd__plain',
        url: plain.url,
        displayName: 'Plain',
      };
      // Its /register (an API-key server's 401) refuses the registration: nothing is kept.
      await refused(oauth.begin(connection), SignInFailedError, /^Cannot start the sign-in to Plain: the provider answered with an error/);
      assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
    } finally {
      await plain.close();
    }
  });

  it('reports a failing metadata endpoint and a refused registration in words', async () => {
    let failing: 'metadata' | 'registration' = 'metadata';
    const broken: FetchLike = (url, init) => {
      const path = new URL(url).pathname;
      if (failing === 'metadata' && path === '/.well-known/oauth-authorization-server')
        return Promise.resolve(new Response('oops', { status: 503 }));
      if (failing === 'registration' && path === '/reg') {
        return Promise.resolve(
          Response.json({ error: 'invalid_redirect_uri', error_description: 'loopback redirect URIs are not allowed' }, { status: 400 }),
        );
      }
      return fetch(url, init);
    };
    const h = await harness({}, { fetch: broken });
    try {
      const connection = connectionTo(h.fixture);
      await refused(
        h.oauth.begin(connection),
        SignInFailedError,
        /^Cannot find how to sign in to Fixture: HTTP 503 trying to load OAuth metadata/,
      );
      failing = 'registration';
      await refused(
        h.oauth.begin(connection),
        SignInFailedError,
        /^Cannot start the sign-in to Fixture: .*loopback redirect URIs are not allowed/,
      );
      assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
    } finally {
      await h.close();
    }
  });
});

describe("the app's SSRF-guarded fetch", { skip: KEYTAR_SKIP }, () => {
  it('carries the whole flow when private targets are allowed (local development), and stops it at the first request when not', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: true, appPorts: () => [] });
    const h = await harness({}, { fetch: guarded.fetch });
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const client = await mcpClient(h, connection, guarded.fetch);
      h.clock.advance(UNTIL_REFRESH_MS);
      assert.equal((await whoami(client)).sub, TEST_USER);
      assert.equal(h.fixture.counters.refreshes, 1);
      await client.close();
      assert.deepEqual((await h.oauth.revokeAndForget(connection)).revoked, ['refresh_token', 'access_token']);
    } finally {
      await h.close();
      await guarded.close();
    }

    const strict = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [] });
    const refusedHere = await harness({}, { fetch: strict.fetch });
    try {
      await refused(
        refusedHere.oauth.begin(connectionTo(refusedHere.fixture)),
        SignInFailedError,
        /^Cannot reach Fixture at http:\/\/127\.0\.0\.1:\d+\/mcp: .*WORKSPACE_ALLOW_PRIVATE_NETWORK=1/,
      );
      assert.deepEqual(refusedHere.fixture.counters.metadataRequests, [], 'discovery never started');
    } finally {
      await refusedHere.close();
      await strict.close();
    }
  });
});

describe('staying signed in when things fail', { skip: KEYTAR_SKIP }, () => {
  it('a refresh that fails for a passing reason keeps the login, and the next use refreshes', async () => {
    let tokenEndpointDown = false;
    const flaky: FetchLike = (url, init) => {
      if (tokenEndpointDown && String(url).endsWith('/token'))
        return Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }));
      return fetch(url, init);
    };
    const h = await harness({}, { fetch: flaky });
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const client = await mcpClient(h, connection);
      const before = (await stored(connection)).tokens!;
      h.clock.advance(UNTIL_REFRESH_MS);
      tokenEndpointDown = true;
      await refused(
        client.callTool({ name: 'whoami', arguments: {} }),
        TokenRefreshError,
        /Could not renew the login of Fixture: fetch failed \(ECONNREFUSED\)\. It is kept/,
      );
      assert.deepEqual((await stored(connection)).tokens, before);
      assert.equal(await h.oauth.state(connection), 'signed-in');
      tokenEndpointDown = false;
      assert.equal((await whoami(client)).sub, TEST_USER);
      assert.notEqual((await stored(connection)).tokens!.refresh_token, before.refresh_token);
      await client.close();
    } finally {
      await h.close();
    }
  });

  it('a renewed login that cannot be stored in the keychain is never used', async () => {
    let keychainFails = false;
    const flakyKeychain: SecretStore = {
      kind: 'keychain',
      get: (account) => keychain.get(account),
      set: (account, value) => (keychainFails ? Promise.reject(new Error('The OS keychain is locked.')) : keychain.set(account, value)),
      delete: (account) => keychain.delete(account),
      accounts: (prefix) => keychain.accounts(prefix),
    };
    const h = await harness({}, { secrets: new ConnectionSecrets(flakyKeychain) });
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const client = await mcpClient(h, connection);
      const before = (await stored(connection)).tokens!;
      h.clock.advance(UNTIL_REFRESH_MS);
      keychainFails = true;
      const accepted = h.fixture.acceptedAccessTokens.length;
      await refused(client.callTool({ name: 'whoami', arguments: {} }), Error, /The OS keychain is locked/);
      assert.equal(h.fixture.counters.refreshes, 1, 'the provider did renew it');
      assert.equal(h.fixture.acceptedAccessTokens.length, accepted, 'but the new access token never reached the server');
      assert.deepEqual((await stored(connection)).tokens, before);
      keychainFails = false;
      await client.close();
    } finally {
      await h.close();
    }
  });

  it('after a 401 it refreshes and sends the request once more, never twice', async () => {
    const h = await harness();
    try {
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      const sent: string[] = [];
      const refusing: FetchLike = async (_url, init) => {
        sent.push(new Headers(init?.headers).get('authorization') ?? '');
        return new Response(null, { status: 401 });
      };
      const response = await h.oauth.fetch(connection, refusing)(h.fixture.mcpUrl, { method: 'POST', body: '{}' });
      assert.equal(response.status, 401, 'the second refusal goes to the transport as it is');
      const { tokens } = await stored(connection);
      assert.equal(sent.length, 2);
      assert.equal(sent[1], `Bearer ${tokens!.access_token}`, 'the retry carries the refreshed token');
      assert.notEqual(sent[0], sent[1]);
      assert.equal(h.fixture.counters.refreshes, 1);
    } finally {
      await h.close();
    }
  });

  it('reports what it could not revoke, and forgets the login all the same', async () => {
    const noEndpoint = await harness({ revocation: false });
    try {
      const connection = connectionTo(noEndpoint.fixture);
      await signIn(noEndpoint, connection);
      const result = await noEndpoint.oauth.revokeAndForget(connection);
      assert.deepEqual(result.revoked, []);
      assert.match(result.problems.join(' '), /^Fixture offers no way to revoke its tokens, so the login was only deleted here/);
      assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
    } finally {
      await noEndpoint.close();
    }

    let revocationDown = false;
    const flaky: FetchLike = (url, init) =>
      revocationDown && String(url).endsWith('/token/revocation') ? Promise.reject(new TypeError('fetch failed')) : fetch(url, init);
    const unreachable = await harness({}, { fetch: flaky });
    try {
      const connection = connectionTo(unreachable.fixture);
      await signIn(unreachable, connection);
      revocationDown = true;
      const result = await unreachable.oauth.revokeAndForget(connection);
      said.push(...result.problems);
      assert.deepEqual(result.revoked, []);
      assert.deepEqual(result.problems, [
        'Could not reach Fixture to revoke the refresh token (fetch failed); the login was deleted here all the same.',
        'Could not reach Fixture to revoke the access token (fetch failed); the login was deleted here all the same.',
      ]);
      assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
    } finally {
      await unreachable.close();
    }
  });

  it('revokeAndForget cancels a sign-in in progress', async () => {
    const h = await harness();
    try {
      const connection = connectionTo(h.fixture);
      const answer = await answerFor(h, connection);
      assert.deepEqual(await h.oauth.revokeAndForget(connection), { revoked: [], problems: [] });
      await refused(h.oauth.finish(answer), SignInStateError, /was cancelled/);
      assert.deepEqual(await keychain.accounts(`connection:${connection.storeId}:`), []);
      assert.deepEqual(h.changes, [], 'no login was there to end');
    } finally {
      await h.close();
    }
  });

  it('a state listener that throws fails neither the sign-in nor the other listeners', async () => {
    const h = await harness();
    const thrown: unknown[] = [];
    const runnerHandlers = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', (error) => thrown.push(error));
    try {
      h.oauth.onStateChange(() => {
        throw new Error('listener bug');
      });
      const heard: string[] = [];
      h.oauth.onStateChange((change) => heard.push(change.state));
      const connection = connectionTo(h.fixture);
      await signIn(h, connection);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(heard, ['signed-in']);
      assert.deepEqual(
        h.changes.map((change) => change.state),
        ['signed-in'],
      );
      assert.deepEqual(
        thrown.map((error) => (error as Error).message),
        ['listener bug'],
      );
    } finally {
      process.removeAllListeners('uncaughtException');
      for (const handler of runnerHandlers) process.on('uncaughtException', handler);
      await h.close();
    }
  });
});

describe('secrets', { skip: KEYTAR_SKIP }, () => {
  it('no token, code, verifier, state or client secret is in any file written, any line printed or any error message', async () => {
    const values = [...seen].filter((value) => value.length >= 16);
    assert.ok(values.length > 40, `collected ${values.length} secret values`);
    const dirs = [scratch, ...(process.env.XDG_DATA_HOME ? [process.env.XDG_DATA_HOME] : [])];
    let searched = 0;
    for (const dir of dirs) searched += (await assertNotInFiles(dir, values)).length;
    assert.ok(process.env.XDG_DATA_HOME === undefined || searched > 0, 'the keyring files were searched');
    for (const line of said)
      for (const value of values) assert.ok(!line.includes(value), `a printed line or message contains a secret: ${line.slice(0, 80)}`);
  });
});

describe('a chain of sign-ins at one authorization server', () => {
  const oauth = new ConnectionOAuth({ secrets, fetch, redirectUrl: () => 'http://127.0.0.1:1/oauth/callback' });
  const signIn = (resource: string, prompt?: string) => {
    const url = new URL(`https://as.example/authorize?client_id=c&scope=tools&state=${encodeURIComponent(resource)}`);
    url.searchParams.set('resource', resource);
    if (prompt) url.searchParams.set('prompt', prompt);
    return { authorizationUrl: url.href, authorizationServer: 'https://as.example', resource, displayName: resource };
  };

  it('names every server of that authorization server in the first sign-in, and leaves the others as they were', () => {
    const [first, second] = oauth.chain([signIn('https://a.example/mcp'), signIn('https://b.example/mcp')]).map((u) => new URL(u));
    assert.deepEqual(first!.searchParams.getAll('resource'), ['https://a.example/mcp', 'https://b.example/mcp']);
    assert.deepEqual(second!.searchParams.getAll('resource'), ['https://b.example/mcp']);
  });

  it('keeps prompt=consent on a later sign-in that asks for a refresh token, which OpenID providers grant only with it', () => {
    const urls = oauth
      .chain([signIn('https://a.example/mcp', 'consent'), signIn('https://b.example/mcp', 'consent')])
      .map((u) => new URL(u));
    assert.deepEqual(
      urls.map((url) => url.searchParams.get('prompt')),
      ['consent', 'consent'],
    );
  });
});
