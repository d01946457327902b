import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { APPROVAL_TTL_MS, AuthorizationServer, CODE_TTL_MS, normalizeCode } from './authorization-server.js';
import { SignInRequestError } from './errors.js';

const ENDPOINT = 'http://127.0.0.1:9100/mcp';
const REDIRECT = 'http://127.0.0.1:5000/cb';

describe('AuthorizationServer', () => {
  let dir: string;
  let clock: number;
  let server: AuthorizationServer;
  const key = randomBytes(32);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-oauth-'));
    clock = Date.parse('2026-01-01T00:00:00Z');
    server = new AuthorizationServer({ stateDir: dir, signingKey: async () => ({ key, keyId: 'k1' }), now: () => clock });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function request(resource?: string) {
    const client = await server.registerClient({ client_name: 'Unit client', redirect_uris: [REDIRECT] });
    const { key: waitKey, request: r } = await server.startSignIn(
      client,
      { redirectUri: REDIRECT, codeChallenge: 'c', state: 's', scopes: [], ...(resource && { resource }) },
      ENDPOINT,
    );
    return { client, waitKey, request: r };
  }

  it('refuses an approval that comes after 10 minutes, and tells the browser it was refused', async () => {
    const { waitKey, request: r } = await request();
    clock += APPROVAL_TTL_MS + 1;
    assert.deepEqual(await server.pending(), []);
    await assert.rejects(
      server.decide(r.code, 'approved', 'local', ''),
      (e: unknown) => e instanceof SignInRequestError && e.status === 409 && /expired/.test(e.message),
    );
    const answer = await server.wait(waitKey);
    assert.equal(answer.state, 'answered');
    const url = new URL((answer as { redirect: string }).redirect);
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.match(url.searchParams.get('error_description')!, /10 minutes/);
    assert.equal(url.searchParams.get('state'), 's');
  });

  it('answers the browser once; a second look is told it is over', async () => {
    const { waitKey, request: r } = await request();
    assert.equal((await server.wait(waitKey)).state, 'pending');
    await server.decide(normalizeCode(r.code.toLowerCase().replace('-', ' ')), 'approved', 'local', 'Crew/a');
    assert.equal((await server.wait(waitKey)).state, 'answered');
    assert.equal((await server.wait(waitKey)).state, 'gone');
    await assert.rejects(server.decide(r.code, 'denied', 'local'), /already approved/);
  });

  it('refuses a code after its minute, and takes the place from the resource the client named', async () => {
    const { client, waitKey, request: r } = await request(`${ENDPOINT}?workspace_path=Crew%2Fa`);
    assert.equal(r.askedPlace, 'Crew/a');
    assert.equal(r.resource, ENDPOINT);
    await server.decide(r.code, 'approved', 'local', 'Crew/a');
    const code = new URL(((await server.wait(waitKey)) as { redirect: string }).redirect).searchParams.get('code')!;
    clock += CODE_TTL_MS + 1;
    await assert.rejects(server.exchangeCode(client.client_id, code, REDIRECT, ENDPOINT), /expired/);
  });

  it('refuses an unknown code with a message naming the command to list them', async () => {
    await assert.rejects(
      server.decide('ZZZZ-ZZZZ', 'approved', 'local', ''),
      (e: unknown) => e instanceof SignInRequestError && e.status === 404 && /approve/.test(e.message),
    );
  });
});
