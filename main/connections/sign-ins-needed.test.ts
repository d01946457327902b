import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture } from '../../e2e/fixtures/upstream-server.js';
import { callApi } from '../../test/support/control-api.js';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { LOCAL_PERSON } from '../places/user-id.js';

// The tray's attention state comes from here: a real host, real upstream servers on loopback.
describe('Host.signInsNeeded', () => {
  let fx: HostFixture;
  let healthy: UpstreamFixture;
  let wantsSignIn: UpstreamFixture;
  let api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: any }>;

  before(async () => {
    healthy = await startUpstream({ name: 'healthy' });
    wantsSignIn = await startUpstream({ name: 'wants-sign-in' });
    wantsSignIn.setMode('sign-in');
    fx = await startHost({ auth: false }, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    const controlUrl = await fx.host.open();
    const token = await fx.host.adminToken();
    api = (method, path, body) => callApi(controlUrl, token, method, path, body);
  });
  after(async () => {
    await fx.close();
    await Promise.all([healthy.close(), wantsSignIn.close()]);
  });

  it('is empty without connections, and with connections that work', async () => {
    assert.deepEqual(await fx.host.signInsNeeded(LOCAL_PERSON), []);
    assert.equal((await api('POST', '/mcp/place', { workspace_path: '', server: { url: healthy.url, name: 'Healthy' } })).status, 201);
    assert.deepEqual(await fx.host.signInsNeeded(LOCAL_PERSON), []);
  });

  it('names a connection whose server asks for a sign-in, with its place, until it is removed', async () => {
    const added = await api('POST', '/mcp/place', { workspace_path: '', server: { url: wantsSignIn.url, name: 'Tracker' } });
    assert.equal(added.json.connection.state, 'sign-in', JSON.stringify(added.json));
    assert.deepEqual(await fx.host.signInsNeeded(LOCAL_PERSON), [{ displayName: 'Tracker', place: 'This machine' }]);
    assert.deepEqual(await fx.host.signInsNeeded('someone-else'), [], 'only the person whose login it uses can sign in');

    assert.equal((await api('DELETE', `/mcp/place/${added.json.connection.name}?workspace_path=`)).status, 200);
    assert.deepEqual(await fx.host.signInsNeeded(LOCAL_PERSON), []);
  });
});
