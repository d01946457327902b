import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enterWorkspace, startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';
import { finishSignIn, MemoryOAuthProvider, openAuthorization, pollWait, startSignIn } from '../../test/support/oauth-client.js';

const REDIRECT = 'http://127.0.0.1:8767/callback';

describe('page API: agent sign-ins and signed-in clients', () => {
  let fx: HostFixture;
  let control: string;
  let admin: string;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;

  before(async () => {
    workspace = await enterWorkspace('pw-signins-', ['Crew/alpha', 'Crew/beta']);
    fx = await startHost();
    control = await fx.host.open();
    admin = await fx.host.adminToken();
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
  });

  async function waiting(
    name: string,
    place = 'Crew/alpha',
  ): Promise<{ provider: MemoryOAuthProvider; waitUrl: string; serverUrl: string; code: string }> {
    const provider = new MemoryOAuthProvider(REDIRECT, name);
    const serverUrl = `${fx.url}?workspace_path=${place}`;
    const waitUrl = await openAuthorization(await startSignIn(provider, serverUrl));
    const listed = await callApi(control, admin, 'GET', '/agent-access/sign-ins');
    const request = (listed.json.requests as Array<{ code: string; clientName: string; askedPlace?: { label: string } }>).find(
      (r) => r.clientName === name,
    )!;
    return { provider, waitUrl, serverUrl, code: request.code };
  }

  /** The page's session cookie, as a browser that opened the login link holds it. */
  async function sessionCookie(): Promise<string> {
    const res = await fetch(await fx.host.loginUrl(), { redirect: 'manual' });
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }

  it('lists a waiting sign-in with its client, place and redirect, without secrets', async () => {
    const { code } = await waiting('Listed agent');
    const listed = await callApi(control, admin, 'GET', '/agent-access/sign-ins');
    const request = listed.json.requests.find((r: { code: string }) => r.code === code);
    assert.deepEqual(Object.keys(request).sort(), ['askedPlace', 'clientName', 'code', 'createdAt', 'expiresAt', 'from', 'redirectUri']);
    assert.deepEqual(request.askedPlace, { root: 'Crew/alpha', label: 'Crew alpha' });
    assert.equal(request.redirectUri, REDIRECT);
    await callApi(control, admin, 'POST', `/agent-access/sign-ins/${code}/deny`, {});
  });

  it('refuses forged approvals: a form post, a body-less post, another origin', async () => {
    const { code } = await waiting('Forged agent');
    const cookie = await sessionCookie();
    const url = `${control}/api/agent-access/sign-ins/${code}/approve`;
    const form = await fetch(url, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'text/plain' }, body: '{}' });
    assert.ok([403, 415].includes(form.status), `form: ${form.status}`);
    const urlencoded = await fetch(url, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'workspace_path=Crew/beta',
    });
    assert.ok([403, 415].includes(urlencoded.status), `urlencoded: ${urlencoded.status}`);
    const bare = await fetch(url, { method: 'POST', headers: { Cookie: cookie } });
    assert.ok([403, 415].includes(bare.status), `bare: ${bare.status}`);
    const crossSite = await fetch(url, {
      method: 'POST',
      headers: { Cookie: cookie, Origin: 'http://evil.example', 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.equal(crossSite.status, 403);
    const anonymous = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(anonymous.status, 401);
    const still = await callApi(control, admin, 'GET', '/agent-access/sign-ins');
    assert.ok(
      still.json.requests.some((r: { code: string }) => r.code === code),
      'still waiting',
    );
    // The page itself (same origin, JSON) may answer.
    const real = await fetch(url, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/json', Origin: control },
      body: '{}',
    });
    assert.equal(real.status, 200);
  });

  it('approves for the place the owner picks, lists the client, and revokes it', async () => {
    const { provider, waitUrl, serverUrl, code } = await waiting('Narrowed agent');
    const approved = await callApi(control, admin, 'POST', `/agent-access/sign-ins/${code}/approve`, { workspace_path: 'Crew/beta' });
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(approved.json.approved.approvedPlace, { root: 'Crew/beta', label: 'Crew beta' });
    await finishSignIn(provider, serverUrl, (await pollWait(waitUrl))!.searchParams.get('code')!);
    const clients = await callApi(control, admin, 'GET', '/agent-access/clients');
    const client = clients.json.clients.find((c: { name: string }) => c.name === 'Narrowed agent');
    assert.deepEqual(client.place, { root: 'Crew/beta', label: 'Crew beta' });
    assert.ok(client.approvedAt && client.lastUsedAt);
    assert.doesNotMatch(clients.text, new RegExp(provider.saved!.refresh_token!.split('.')[1]!));
    const revoked = await callApi(control, admin, 'POST', `/agent-access/clients/${client.id}/revoke`, {});
    assert.equal(revoked.status, 200);
    assert.ok(revoked.json.revoked.revokedAt);
    assert.equal((await callApi(control, admin, 'POST', '/agent-access/clients/0123456789abcdef/revoke', {})).status, 404);
  });

  it('says why an unknown or answered code cannot be approved', async () => {
    const unknown = await callApi(control, admin, 'POST', '/agent-access/sign-ins/ZZZZ-ZZZZ/approve', {});
    assert.equal(unknown.status, 404);
    const { code } = await waiting('Twice agent');
    await callApi(control, admin, 'POST', `/agent-access/sign-ins/${code}/deny`, {});
    const again = await callApi(control, admin, 'POST', `/agent-access/sign-ins/${code}/approve`, {});
    assert.equal(again.status, 409);
    assert.match(again.json.error.message, /already denied/);
  });
});
