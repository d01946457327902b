import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtPath } from '../test/support/built.js';
import { callApi } from '../test/support/control-api.js';
import { startHost, type HostFixture } from '../test/support/host-fixture.js';
import { CLI, repeatUntil, runNode } from './race-support.js';

// The server creates tokens (POST /api/tokens) while another process revokes them in the same state
// dir: each change is made under the lock both take, on a fresh read, so no revocation is lost.

const REVOKER = builtPath(new URL('./fixtures/revoke-tokens.ts', import.meta.url));
const ROUNDS = 300;

describe('revocations from another process while the server creates tokens', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  let env: NodeJS.ProcessEnv;
  const api = (method: string, path: string, body?: unknown) => callApi(controlUrl, adminToken, method, path, body);

  before(async () => {
    fx = await startHost();
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      WORKSPACE_STATE_DIR: fx.stateDir,
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_REGISTRY_URL: '',
    };
  });
  after(() => fx.close());

  /** Creates tokens through the API, two at a time, until `done` settles; returns their ids. */
  async function createUntil(done: Promise<unknown>): Promise<string[]> {
    const ids: string[] = [];
    await repeatUntil(done, async () => {
      const created = await api('POST', '/tokens', { name: 'racing' });
      assert.equal(created.status, 201, created.text);
      ids.push(created.json.token.id);
    });
    return ids;
  }

  async function revokedIds(): Promise<Set<string>> {
    const { json } = await api('GET', '/tokens');
    return new Set(json.tokens.filter((t: { revokedAt?: string }) => t.revokedAt).map((t: { id: string }) => t.id));
  }

  it(`loses none of ${ROUNDS} revocations, nor any token created meanwhile`, async () => {
    const victims: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < ROUNDS; i++) victims.push((await api('POST', '/tokens', { name: `victim ${i}` })).json.token);
    const revoker = runNode([REVOKER, fx.stateDir], env, JSON.stringify(victims.map((v) => v.id)));
    const created = await createUntil(revoker);
    const { code, stdout, stderr } = await revoker;
    assert.equal(code, 0, stderr);
    assert.equal(stdout.trim(), `revoked ${ROUNDS}`);
    assert.ok(created.length > 20, `the server created only ${created.length} tokens during the race`);

    const revoked = await revokedIds();
    const lost = victims.filter((v) => !revoked.has(v.id));
    assert.equal(lost.length, 0, `${lost.length} revocations lost`);
    const listed = new Set((await api('GET', '/tokens')).json.tokens.map((t: { id: string }) => t.id));
    assert.deepEqual(
      created.filter((id) => !listed.has(id)),
      [],
      'every created token is still listed',
    );
    for (const victim of victims.slice(-3)) await assert.rejects(fx.connect(victim.token), /revoked/);
  });

  it("keeps what the CLI's `token revoke` says: the token is refused from then on", async () => {
    const victims: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < 4; i++) victims.push((await api('POST', '/tokens', { name: `cli victim ${i}` })).json.token);
    const cli = Promise.all(victims.map((v) => runNode([CLI, 'token', 'revoke', v.id], env)));
    await createUntil(cli);
    for (const result of await cli) {
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /A running server refuses it from now on/);
    }
    const revoked = await revokedIds();
    assert.deepEqual(
      victims.filter((v) => !revoked.has(v.id)).map((v) => v.id),
      [],
    );
    for (const victim of victims) await assert.rejects(fx.connect(victim.token), /revoked/);
  });
});
