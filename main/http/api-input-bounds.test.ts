import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';
import { raw } from '../../test/support/raw-http.js';

// Input that would read as something it is not, or cost more than it is worth, is refused where it
// comes in: place roots with control, bidi or invisible characters, and over-long server URLs.

const HIDDEN = [
  ['a right-to-left override', 'Crew/al\u202Etxt.ahp'],
  ['a zero-width space', 'Crew/alpha\u200B'],
  ['isolates', 'Crew/\u2066alpha\u2069'],
  ['a line break', 'Crew/al\npha'],
] as const;

describe('the page API and the agent endpoint refuse place roots and URLs that do not read as what they are', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown) => callApi(controlUrl, adminToken, method, path, body);

  before(async () => {
    fx = await startHost({ auth: false });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  for (const [what, root] of HIDDEN) {
    it(`refuses a place root with ${what} on every kind of route, changing nothing`, async () => {
      const query = `workspace_path=${encodeURIComponent(root)}`;
      const answers = [
        await api('GET', `/mcp/place?${query}`),
        await api('GET', `/secrets?${query}`),
        await api('PUT', '/access/places', { workspace_path: root, readers: ['bob'] }),
        await api('PUT', '/places/policy', { workspace_path: root, policy: 'strict' }),
        await api('POST', '/mcp/place', { workspace_path: root, catalog: 'context7' }),
      ];
      for (const answer of answers) {
        assert.equal(answer.status, 400, answer.text);
        assert.match(answer.json.error.message, /the Crew id contains a control, bidi or invisible character/);
      }
      assert.deepEqual((await api('GET', '/access')).json.places, {});

      const initialize = JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      const mcp = await raw(`${fx.url}?${query}`, { body: initialize });
      assert.equal(mcp.status, 400, mcp.body);
      assert.match(mcp.body, /the Crew id contains a control, bidi or invisible character/);
    });
  }

  it('refuses a server URL longer than 2048 characters, when a connection is added by URL', async () => {
    const url = `https://mcp.example.com/mcp?pad=${'a'.repeat(2048)}`;
    const added = await api('POST', '/mcp/place', { workspace_path: 'Crew/alpha', server: { url } });
    assert.equal(added.status, 400, added.text);
    assert.match(added.json.error.message, /The URL is 2080 characters long; a server URL may have at most 2048/);
    assert.ok(!added.text.includes('a'.repeat(300)), 'the answer does not echo the whole URL');
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.connections, []);
  });
});
