import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT, UnsecuredJWT } from 'jose';
import { AgentTokenStore } from '../auth/agent-tokens.js';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { raw } from '../../test/support/raw-http.js';

const SECRET = 'a shared secret that the platform signs with';
const ISSUER = 'https://persona.example';
const AUDIENCE = 'workspace';
const now = () => Math.floor(Date.now() / 1000);

function externalToken(
  claims: Record<string, unknown> = {},
  options: { secret?: string; issuer?: string; audience?: string; exp?: number; nbf?: number } = {},
) {
  const jwt = new SignJWT({ project_id: 'proj-1', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('user-1')
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? now() + 300);
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

/** A tools/call that would create `marker` if it reached the tool. */
function writeCall(marker: string) {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'write', arguments: { path: marker, content: 'x' } },
  });
}

describe('agent endpoint authentication', () => {
  let fx: HostFixture;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-auth-'));
    fx = await startHost({}, { WORKSPACE_JWT_SECRET: SECRET, WORKSPACE_JWT_ISSUER: ISSUER, WORKSPACE_JWT_AUDIENCE: AUDIENCE });
  });
  after(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts a good external token and an app token', async () => {
    for (const token of [await externalToken(), await fx.token()]) {
      const { client } = await fx.connect(token);
      assert.equal((await client.listTools()).tools.length, 6);
    }
  });

  const refusals: Array<[string, () => Promise<string | undefined>, RegExp]> = [
    ['no token', async () => undefined, /bearer token/i],
    ['an expired token', () => externalToken({}, { exp: now() - 60 }), /expired/i],
    ['a token not yet valid', () => externalToken({}, { nbf: now() + 600 }), /not (yet )?valid|before/i],
    ['a wrong signature', () => externalToken({}, { secret: 'some other secret entirely, same length' }), /signature/i],
    [
      'alg none',
      async () => new UnsecuredJWT({ sub: 'user-1', iss: ISSUER, aud: AUDIENCE }).setExpirationTime('5m').encode(),
      /alg|unsigned/i,
    ],
    ['a wrong issuer', () => externalToken({}, { issuer: 'https://evil.example' }), /iss/i],
    ['a wrong audience', () => externalToken({}, { audience: 'someone-else' }), /aud/i],
    ['garbage', async () => 'not.a.jwt', /JWT|token/i],
  ];

  for (const [what, makeToken, message] of refusals) {
    it(`refuses ${what} with 401 and a WWW-Authenticate challenge, reaching no tool`, async () => {
      const token = await makeToken();
      const marker = join(dir, `marker-${what.replace(/\W+/g, '-')}`);
      const response = await raw(fx.url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, body: writeCall(marker) });
      assert.equal(response.status, 401);
      const challenge = String(response.headers['www-authenticate']);
      assert.match(challenge, /^Bearer realm="persona-mcp-workspace"/);
      if (token) assert.match(challenge, /error="invalid_token"/);
      assert.match(JSON.parse(response.body).error.message, message);
      if (token) assert.ok(!response.body.includes(token), 'the token is not echoed');
      await assert.rejects(stat(marker), 'the tool never ran');
    });
  }

  it('refuses a revoked app token at once, even when another process revoked it', async () => {
    const created = await (await fx.host.tokens()).create({ name: 'to revoke' });
    const { client } = await fx.connect(created.token);
    assert.equal((await client.listTools()).tools.length, 6);

    // A separate store on the same state dir, as the CLI's "token revoke" would use.
    await new AgentTokenStore({ stateDir: fx.stateDir }).revoke(created.id);

    const marker = join(dir, 'marker-revoked');
    const response = await raw(fx.url, { headers: { Authorization: `Bearer ${created.token}` }, body: writeCall(marker) });
    assert.equal(response.status, 401);
    assert.match(JSON.parse(response.body).error.message, /revoked/);
    await assert.rejects(stat(marker));
    await assert.rejects(client.listTools(), 'the open session is refused too');
  });

  it('records the project_id of the verified token in the audit log', async () => {
    const { client } = await fx.connect(await externalToken({ project_id: 'proj-audit' }));
    await client.callTool({ name: 'read', arguments: { path: join(dir, 'missing') } });
    const find = async () =>
      (await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((r) => r.projectId === 'proj-audit');
    await waitFor(async () => (await find()) !== undefined, 5_000, 'the audit record');
    const record = await find();
    assert.equal(record?.caller, 'user-1');
    assert.equal(record?.outcome, 'error');
  });
});

describe('DNS-rebinding protection', () => {
  let fx: HostFixture;
  before(async () => {
    fx = await startHost({ auth: false });
  });
  after(() => fx.close());

  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });

  it('refuses a foreign Host header with 403', async () => {
    const response = await raw(fx.url, { headers: { Host: 'attacker.example:9100' }, body: initialize });
    assert.equal(response.status, 403);
    assert.match(JSON.parse(response.body).error.message, /Host "attacker\.example:9100" is not allowed/);
  });

  it('refuses a foreign browser Origin with 403', async () => {
    const response = await raw(fx.url, { headers: { Origin: 'https://attacker.example' }, body: initialize });
    assert.equal(response.status, 403);
    assert.match(JSON.parse(response.body).error.message, /Origin/);
  });

  it('refuses an Origin of another port or scheme of its own host: another site', async () => {
    const port = Number(new URL(fx.url).port);
    for (const origin of [
      `http://127.0.0.1:${port + 1}`,
      'http://localhost:6274',
      `https://127.0.0.1:${port}`,
      'http://127.0.0.1',
      'null',
    ]) {
      const response = await raw(fx.url, { headers: { Origin: origin }, body: initialize });
      assert.equal(response.status, 403, origin);
      assert.match(JSON.parse(response.body).error.message, /only from its own origin \(scheme, host and port\)/);
    }
  });

  it('accepts its own hosts and its own origin', async () => {
    const port = new URL(fx.url).port;
    const cases: Array<Record<string, string>> = [
      { Host: `localhost:${port}` },
      { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` },
      { Host: `localhost:${port}`, Origin: `http://localhost:${port}` },
    ];
    for (const headers of cases) {
      const response = await raw(fx.url, { headers, body: initialize });
      assert.equal(response.status, 200, JSON.stringify(headers));
    }
  });
});
