import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import {
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importPKCS8,
  SignJWT,
  UnsecuredJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { testClock } from '../../test/support/clock.js';
import { AgentTokenStore, APP_TOKEN_ISSUER } from './agent-tokens.js';
import { AuthError, JwtConfigError, JwtVerifier, wwwAuthenticate, type AuthErrorReason } from './jwt-verifier.js';

const SECRET = 'an external shared secret of enough length';
const secretBytes = new TextEncoder().encode(SECRET);
const now = () => Math.floor(Date.now() / 1000);

/** A token with sensible defaults: sub, iat, exp in an hour. */
async function sign(
  key: Parameters<SignJWT['sign']>[0],
  alg: string,
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({ sub: 'user-1', iat: now(), exp: now() + 3600, ...claims }).setProtectedHeader({ alg, ...header }).sign(key);
}

async function refused(verifier: JwtVerifier, token: string, reason: AuthErrorReason): Promise<AuthError> {
  let caught: unknown;
  try {
    await verifier.verifyToken(token);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof AuthError, `expected AuthError(${reason}), got ${String(caught)}`);
  assert.equal(caught.reason, reason, caught.message);
  for (const part of token.split('.')) if (part.length > 8) assert.ok(!caught.message.includes(part), 'the message never echoes the token');
  return caught;
}

describe('JwtVerifier with the app’s own tokens', () => {
  let stateDir: string;
  let store: AgentTokenStore;
  let verifier: JwtVerifier;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'jwt-verifier-'));
    store = new AgentTokenStore({ stateDir });
    verifier = await JwtVerifier.create({ appTokens: store });
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('accepts them with no external key configured', async () => {
    const created = await store.create({ name: 'agent', workspacePath: 'Crew/42' });
    assert.deepEqual(await verifier.verifyToken(created.token), {
      subject: `token:${created.id}`,
      workspacePath: 'Crew/42',
      tokenId: created.id,
      source: 'app',
    });
  });

  it('accepts tokens that never expire', async () => {
    const created = await store.create({ name: 'agent', expiresIn: 'never' });
    assert.equal((await verifier.verifyToken(created.token)).tokenId, created.id);
  });

  it('refuses a token revoked by another process, without a restart', async () => {
    const created = await store.create({ name: 'agent' });
    await verifier.verifyToken(created.token);
    await new AgentTokenStore({ stateDir }).revoke(created.id);
    await refused(verifier, created.token, 'revoked');
  });

  it('refuses a revoked token on the very next request, however often it was accepted just before', async () => {
    // Any remembered answer (a cached status, a file watcher not yet fired) would let these through.
    const created = await store.create({ name: 'agent' });
    for (let i = 0; i < 100; i++) await verifier.verifyToken(created.token);
    const other = new AgentTokenStore({ stateDir });
    await other.revoke(created.id);
    await refused(verifier, created.token, 'revoked');
    const again = await other.create({ name: 'second' });
    await verifier.verifyToken(again.token);
    await rm(join(stateDir, 'agent-tokens.json'));
    await refused(verifier, again.token, 'unknown_token');
  });

  it('refuses a token whose record is gone', async () => {
    const created = await store.create({ name: 'agent' });
    await rm(join(stateDir, 'agent-tokens.json'));
    await refused(verifier, created.token, 'unknown_token');
  });

  it('refuses an expired one', async () => {
    const past = new AgentTokenStore({ stateDir, now: () => new Date(Date.now() - 2 * 86_400_000) });
    const created = await past.create({ name: 'old', expiresIn: '1d' });
    await refused(verifier, created.token, 'expired');
  });

  it('checks tokens with the app’s key id only against the app key, even when an external secret is set', async () => {
    const both = await JwtVerifier.create({ appTokens: store, secret: SECRET });
    const { keyId } = await store.signingKey();
    const forged = await sign(
      secretBytes,
      'HS256',
      { iss: APP_TOKEN_ISSUER, jti: '0123456789abcdef', sub: 'token:0123456789abcdef' },
      { kid: keyId },
    );
    await refused(both, forged, 'bad_signature');
    // The same token without the app's kid is an ordinary external token.
    const external = await sign(secretBytes, 'HS256', { sub: 'user-9' }, { kid: 'persona' });
    assert.deepEqual(await both.verifyToken(external), { subject: 'user-9', source: 'external' });
    const created = await store.create({ name: 'agent' });
    assert.equal((await both.verifyToken(created.token)).source, 'app');
  });

  it('requires the app issuer and a subject that matches the id', async () => {
    const { key, keyId } = await store.signingKey();
    const created = await store.create({ name: 'agent' });
    const claims = { jti: created.id, sub: `token:${created.id}`, iss: APP_TOKEN_ISSUER };
    assert.equal((await verifier.verifyToken(await sign(key, 'HS256', claims, { kid: keyId }))).tokenId, created.id);
    const wrongIssuer = await refused(verifier, await sign(key, 'HS256', { ...claims, iss: 'someone-else' }, { kid: keyId }), 'bad_claims');
    assert.match(wrongIssuer.message, /issuer \(iss\)/);
    await refused(verifier, await sign(key, 'HS256', { ...claims, sub: 'token:ffffffffffffffff' }, { kid: keyId }), 'bad_claims');
    const { jti: _jti, ...withoutId } = claims;
    await refused(verifier, await sign(key, 'HS256', withoutId, { kid: keyId }), 'bad_claims');
  });

  it('refuses an unsigned token that claims the app key id', async () => {
    const { keyId } = await store.signingKey();
    const created = await store.create({ name: 'agent' });
    const unsigned = new UnsecuredJWT({ sub: `token:${created.id}`, jti: created.id, iss: APP_TOKEN_ISSUER }).encode();
    const [, body] = unsigned.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', kid: keyId })).toString('base64url');
    await refused(verifier, `${header}.${body}.`, 'bad_algorithm');
  });

  it('refuses external tokens when no external key is configured', async () => {
    const error = await refused(verifier, await sign(secretBytes, 'HS256'), 'no_key');
    assert.match(error.message, /only tokens it created itself/);
  });
});

describe('JwtVerifier with an external HS256 secret', () => {
  let verifier: JwtVerifier;
  before(async () => {
    verifier = await JwtVerifier.create({ secret: SECRET, issuer: 'https://persona.example', audience: 'workspace' });
  });
  const good = { iss: 'https://persona.example', aud: 'workspace' };

  it('accepts a valid token and returns its caller claims', async () => {
    const token = await sign(secretBytes, 'HS256', { ...good, sub: 'u-7', project_id: 'p-1', workspace_path: 'Workflow/a' });
    assert.deepEqual(await verifier.verifyToken(token), {
      subject: 'u-7',
      projectId: 'p-1',
      workspacePath: 'Workflow/a',
      source: 'external',
    });
  });

  it('enforces issuer and audience', async () => {
    assert.match(
      (await refused(verifier, await sign(secretBytes, 'HS256', { ...good, iss: 'https://evil.example' }), 'bad_claims')).message,
      /issuer/,
    );
    assert.match((await refused(verifier, await sign(secretBytes, 'HS256', { ...good, aud: 'other' }), 'bad_claims')).message, /audience/);
    const { aud: _aud, ...noAudience } = good;
    await refused(verifier, await sign(secretBytes, 'HS256', noAudience), 'bad_claims');
  });

  it('requires a subject and an expiry', async () => {
    const noSub = await new SignJWT({ ...good }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(secretBytes);
    assert.match((await refused(verifier, noSub, 'bad_claims')).message, /subject \(sub\)/);
    const emptySub = await sign(secretBytes, 'HS256', { ...good, sub: '' });
    await refused(verifier, emptySub, 'bad_claims');
    const noExp = await new SignJWT({ ...good, sub: 'u' }).setProtectedHeader({ alg: 'HS256' }).sign(secretBytes);
    assert.match((await refused(verifier, noExp, 'bad_claims')).message, /no expiry \(exp\)/);
  });

  it('enforces exp and nbf with a 5 second tolerance', async () => {
    await refused(verifier, await sign(secretBytes, 'HS256', { ...good, exp: now() - 30 }), 'expired');
    await verifier.verifyToken(await sign(secretBytes, 'HS256', { ...good, exp: now() - 2 }));
    await refused(verifier, await sign(secretBytes, 'HS256', { ...good, nbf: now() + 60 }), 'not_yet_valid');
    await verifier.verifyToken(await sign(secretBytes, 'HS256', { ...good, nbf: now() + 2 }));
  });

  it('refuses a token it already verified once it expires', async () => {
    const clock = testClock();
    const verifier = await JwtVerifier.create({ secret: SECRET, issuer: 'https://persona.example', audience: 'workspace', now: clock.now });
    // Accepted within the 5 s tolerance, then remembered; the window is checked again on each use.
    const token = await sign(secretBytes, 'HS256', { ...good, exp: now() - 4 });
    await verifier.verifyToken(token);
    await verifier.verifyToken(token);
    clock.advance(2_100);
    await refused(verifier, token, 'expired');
  });

  it('refuses claims of the wrong type rather than ignoring them', async () => {
    await refused(verifier, await sign(secretBytes, 'HS256', { ...good, workspace_path: ['/'] }), 'bad_claims');
    await refused(verifier, await sign(secretBytes, 'HS256', { ...good, project_id: 42 }), 'bad_claims');
  });

  it('refuses a token signed with another secret', async () => {
    await refused(verifier, await sign(new TextEncoder().encode('another secret entirely, same length'), 'HS256', good), 'bad_signature');
  });

  it('refuses alg none and algorithms no key accepts', async () => {
    const unsigned = new UnsecuredJWT({ ...good, sub: 'u' }).setExpirationTime('1h').encode();
    assert.match((await refused(verifier, unsigned, 'bad_algorithm')).message, /alg "none"/);
    const header = Buffer.from(JSON.stringify({ alg: 'NONE' })).toString('base64url');
    await refused(verifier, `${header}.${unsigned.split('.')[1]}.`, 'bad_algorithm');
    await refused(verifier, await sign(new TextEncoder().encode(SECRET), 'HS512', good), 'bad_algorithm');
  });

  it('refuses what is not a signed JWT', async () => {
    for (const token of ['abc', 'a.b.c', 'a.b.c.d.e', `${'x'.repeat(20000)}.y.z`]) await refused(verifier, token, 'malformed');
  });
});

describe('JwtVerifier with a public key PEM', () => {
  it('pins the algorithms to the key type', async () => {
    const cases: Array<{ generate: Parameters<typeof generateKeyPair>[0]; accepted: string[]; refused: string }> = [
      { generate: 'RS256', accepted: ['RS256', 'RS512', 'PS256', 'PS384'], refused: 'ES256' },
      { generate: 'ES256', accepted: ['ES256'], refused: 'ES384' },
      { generate: 'ES384', accepted: ['ES384'], refused: 'ES256' },
      { generate: 'EdDSA', accepted: ['EdDSA'], refused: 'RS256' },
    ];
    for (const { generate, accepted, refused: wrong } of cases) {
      const { publicKey, privateKey } = await generateKeyPair(generate, { extractable: true });
      const verifier = await JwtVerifier.create({ publicKeyPem: await exportSPKI(publicKey) });
      for (const alg of accepted) {
        const signer = alg === generate ? privateKey : await importPrivateFor(privateKey, alg);
        assert.equal((await verifier.verifyToken(await sign(signer, alg, { sub: `${generate}-${alg}` }))).subject, `${generate}-${alg}`);
      }
      const other = await generateKeyPair(wrong as Parameters<typeof generateKeyPair>[0]);
      await refused(verifier, await sign(other.privateKey, wrong), 'bad_algorithm');
      const stranger = await generateKeyPair(generate);
      await refused(verifier, await sign(stranger.privateKey, generate), 'bad_signature');
    }
  });

  it('refuses an HS256 token keyed with the public key (algorithm confusion)', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const pem = await exportSPKI(publicKey);
    const verifier = await JwtVerifier.create({ publicKeyPem: pem });
    await refused(verifier, await sign(new TextEncoder().encode(pem), 'HS256'), 'bad_algorithm');
  });

  it('tries each configured source that accepts the algorithm', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const verifier = await JwtVerifier.create({ secret: SECRET, publicKeyPem: await exportSPKI(publicKey) });
    assert.equal((await verifier.verifyToken(await sign(secretBytes, 'HS256', { sub: 'by-secret' }))).subject, 'by-secret');
    assert.equal((await verifier.verifyToken(await sign(privateKey, 'ES256', { sub: 'by-pem' }))).subject, 'by-pem');
  });

  it('refuses unusable key settings when created', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    await assert.rejects(JwtVerifier.create({ publicKeyPem: await exportPKCS8(privateKey) }), (error: Error) => {
      assert.ok(error instanceof JwtConfigError);
      assert.match(error.message, /holds a private key/);
      return true;
    });
    await assert.rejects(JwtVerifier.create({ publicKeyPem: 'not a pem' }), JwtConfigError);
    const x25519 = await generateKeyPair('ECDH-ES', { crv: 'X25519', extractable: true });
    await assert.rejects(JwtVerifier.create({ publicKeyPem: await exportSPKI(x25519.publicKey) }), /unsupported type \(x25519\)/);
    await assert.rejects(JwtVerifier.create({ secret: '' }), /secret is empty/);
  });
});

/** RS256 keys also sign PS*; jose wants a key imported for each algorithm. */
async function importPrivateFor(privateKey: CryptoKey, alg: string): Promise<CryptoKey> {
  return importPKCS8(await exportPKCS8(privateKey), alg);
}

describe('JwtVerifier with a JWKS URL', () => {
  let server: Server;
  let url: string;
  let jwks: { keys: JWK[] } = { keys: [] };
  let requests = 0;
  before(async () => {
    server = createServer((_req, res) => {
      requests++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function keyPair(alg: 'RS256' | 'ES256', kid?: string) {
    const pair = await generateKeyPair(alg, { extractable: true });
    const jwk = { ...(await exportJWK(pair.publicKey)), alg, ...(kid && { kid }) };
    return { ...pair, jwk };
  }

  it('accepts tokens signed by a key of the set, found by kid', async () => {
    const a = await keyPair('RS256', 'a');
    const b = await keyPair('ES256', 'b');
    jwks = { keys: [a.jwk, b.jwk] };
    const verifier = await JwtVerifier.create({ jwksUrl: url, audience: 'workspace' });
    const before = requests;
    assert.equal(
      (await verifier.verifyToken(await sign(a.privateKey, 'RS256', { sub: 'ra', aud: 'workspace' }, { kid: 'a' }))).subject,
      'ra',
    );
    assert.equal(
      (await verifier.verifyToken(await sign(b.privateKey, 'ES256', { sub: 'eb', aud: 'workspace' }, { kid: 'b' }))).subject,
      'eb',
    );
    assert.equal(requests - before, 1, 'the key set is fetched once and cached');
    await refused(verifier, await sign(a.privateKey, 'RS256', { aud: 'elsewhere' }, { kid: 'a' }), 'bad_claims');
  });

  it('refuses tokens no key of the set signed', async () => {
    const a = await keyPair('RS256', 'a');
    jwks = { keys: [a.jwk] };
    const verifier = await JwtVerifier.create({ jwksUrl: url });
    const stranger = await keyPair('RS256');
    await refused(verifier, await sign(stranger.privateKey, 'RS256', {}, { kid: 'a' }), 'bad_signature');
    await refused(verifier, await sign(stranger.privateKey, 'RS256', {}, { kid: 'unknown' }), 'bad_signature');
    await refused(verifier, await sign(secretBytes, 'HS256'), 'bad_algorithm');
  });

  it('tries every key when several match a token without kid', async () => {
    const first = await keyPair('ES256');
    const second = await keyPair('ES256');
    jwks = { keys: [first.jwk, second.jwk] };
    const verifier = await JwtVerifier.create({ jwksUrl: url });
    assert.equal((await verifier.verifyToken(await sign(second.privateKey, 'ES256', { sub: 'second' }))).subject, 'second');
    await refused(verifier, await sign((await keyPair('ES256')).privateKey, 'ES256'), 'bad_signature');
  });

  it('says the keys are unavailable when the JWKS cannot be fetched', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const verifier = await JwtVerifier.create({ jwksUrl: `http://127.0.0.1:${port}/jwks.json` });
    const error = await refused(verifier, await sign((await keyPair('RS256')).privateKey, 'RS256', {}, { kid: 'a' }), 'key_unavailable');
    assert.match(error.message, /could not get the keys/);
  });

  it('says the keys are unavailable when the JWKS is not a key set', async () => {
    jwks = { keys: 'nope' } as unknown as { keys: JWK[] };
    const verifier = await JwtVerifier.create({ jwksUrl: url });
    await refused(verifier, await sign((await keyPair('RS256')).privateKey, 'RS256', {}, { kid: 'a' }), 'key_unavailable');
  });

  it('accepts only https URLs, or http to loopback', async () => {
    await assert.rejects(JwtVerifier.create({ jwksUrl: 'http://auth.example/jwks.json' }), JwtConfigError);
    await assert.rejects(JwtVerifier.create({ jwksUrl: 'not a url' }), JwtConfigError);
    await JwtVerifier.create({ jwksUrl: 'https://auth.example/jwks.json' });
    await JwtVerifier.create({ jwksUrl: 'http://localhost:1/jwks.json' });
  });
});

describe('JwtVerifier.verifyAuthorization', () => {
  let verifier: JwtVerifier;
  before(async () => {
    verifier = await JwtVerifier.create({ secret: SECRET });
  });

  it('reads a Bearer header, whatever the case of the scheme', async () => {
    const token = await sign(secretBytes, 'HS256', { sub: 'u' });
    assert.equal((await verifier.verifyAuthorization(`Bearer ${token}`)).subject, 'u');
    assert.equal((await verifier.verifyAuthorization(`bearer  ${token} `)).subject, 'u');
  });

  it('calls no header, an empty one or another scheme missing', async () => {
    for (const header of [undefined, '', '   ', 'Basic dXNlcjpwYXNz']) {
      await assert.rejects(verifier.verifyAuthorization(header), (error: AuthError) => error.reason === 'missing');
    }
  });

  it('calls a Bearer header without exactly one token malformed', async () => {
    for (const header of ['Bearer', 'Bearer a b']) {
      await assert.rejects(verifier.verifyAuthorization(header), (error: AuthError) => error.reason === 'malformed');
    }
  });

  it('refuses everything when no key at all is configured', async () => {
    const bare = await JwtVerifier.create({});
    await assert.rejects(
      bare.verifyAuthorization(`Bearer ${await sign(secretBytes, 'HS256')}`),
      (error: AuthError) => error.reason === 'no_key',
    );
  });
});

describe('wwwAuthenticate', () => {
  it('gives only the realm when the token was missing', () => {
    assert.equal(wwwAuthenticate(), 'Bearer realm="persona-mcp-workspace"');
    assert.equal(wwwAuthenticate(new AuthError('missing', 'x')), 'Bearer realm="persona-mcp-workspace"');
  });

  it('gives invalid_token with a description that stays inside the quoted string', () => {
    assert.equal(
      wwwAuthenticate(new AuthError('expired', 'The token has expired. Get a new one.')),
      'Bearer realm="persona-mcp-workspace", error="invalid_token", error_description="The token has expired. Get a new one."',
    );
    assert.equal(
      wwwAuthenticate(new AuthError('bad_claims', 'a "quoted" \\ back\nslash – dash')),
      'Bearer realm="persona-mcp-workspace", error="invalid_token", error_description="a \'quoted\'  backslash  dash"',
    );
  });
});
