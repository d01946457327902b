import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';

describe('the page API: a place\'s sandbox policy', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown, token = adminToken) => callApi(controlUrl, token, method, path, body);

  before(async () => {
    fx = await startHost({}, { WORKSPACE_JWT_SECRET: 'policy-test-secret' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  it('shows machine by default on the place header, and the owner changes it', async () => {
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.policy, { kind: 'machine', folders: [], canChange: true });

    const set = await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha/runs/1', policy: 'strict', folders: ['/srv/shared/'] });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.policy, { kind: 'strict', folders: ['/srv/shared'], canChange: true });
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.policy, { kind: 'strict', folders: ['/srv/shared'], canChange: true });
    assert.deepEqual((await api('GET', '/access')).json.places['Crew/alpha'], { policy: { kind: 'strict', folders: ['/srv/shared'] } });

    assert.equal((await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha', policy: 'machine' })).json.policy.kind, 'machine');
    assert.deepEqual((await api('GET', '/access')).json.places, {});
  });

  it('refuses a bad policy or folder with what to do, and changes nothing', async () => {
    await api('PUT', '/places/policy', { workspace_path: 'Crew/beta', policy: 'place' });
    for (const [body, message] of [
      [{ workspace_path: 'Crew/beta', policy: 'open' }, /"open" is not a policy: use machine, place or strict/],
      [{ workspace_path: 'Crew/beta', policy: 'place', folders: ['relative'] }, /must be an absolute path/],
      [{ workspace_path: 'src/x', policy: 'place' }, /is not in a place/],
    ] as const) {
      const answer = await api('PUT', '/places/policy', body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/beta')).json.policy, { kind: 'place', folders: [], canChange: true });
  });

  it('lets only the person who runs the app change a policy', async () => {
    const alice = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setExpirationTime('5m').sign(new TextEncoder().encode('policy-test-secret'));
    const answer = await api('PUT', '/places/policy', { workspace_path: 'Crew/beta', policy: 'machine' }, alice);
    assert.equal(answer.status, 403);
    assert.match(answer.json.error.message, /Only the person who runs this app/);
    assert.equal((await api('GET', '/mcp/place?workspace_path=Crew/beta')).json.policy.kind, 'place');
    await api('PUT', '/access/places', { workspace_path: 'Crew/beta', readers: ['alice'] });
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/beta', undefined, alice)).json.policy, { kind: 'place', folders: [], canChange: false }, 'a reader sees it, cannot change it');
  });
});
