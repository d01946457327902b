import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { enterWorkspace, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { callApi } from '../test/support/control-api.js';
import { walkSignIn } from './fixtures/oauth-browser.js';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauth-server.js';

// A sign-in group: three MCP servers behind one provider login, listed in the person's own catalog
// file. "Connect 3 services" chains the three sign-ins in one browser window ($BROWSER: a script
// that follows the redirects with one cookie jar), so the person signs in once and all three are
// connected, each with a token for its own server. Real authorization server (oidc-provider).

const BROWSER = fileURLToPath(new URL('./fixtures/oauth-browser.sh', import.meta.url));
const PLACE = 'Crew/ops';

describe('sign-in groups, end to end', () => {
  let fx: HostFixture;
  let provider: OAuthFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let controlUrl: string;
  let adminToken: string;

  const api = (method: string, path: string, body?: unknown) => callApi(controlUrl, adminToken, method, path, body);
  const states = async (names: string[]) => {
    const { connections } = (await api('GET', `/mcp/place?workspace_path=${PLACE}`)).json as {
      connections: { name: string; state: string }[];
    };
    return names.map((name) => connections.find((c) => c.name === name)?.state);
  };
  const addGroup = async () => {
    const names: string[] = [];
    for (const id of ['acme-tracker', 'acme-docs', 'acme-builds']) {
      const added = await api('POST', '/mcp/place', { workspace_path: PLACE, catalog: id });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      names.push(added.json.connection.name);
    }
    return names;
  };
  const removeAll = async (names: string[]) => {
    for (const name of names) assert.equal((await api('DELETE', `/mcp/place/${name}?workspace_path=${PLACE}`)).status, 200);
  };

  before(async () => {
    workspace = await enterWorkspace('pw-groups-', [PLACE]);
    process.env.BROWSER = BROWSER;
    provider = await startOAuthFixture({ moreServices: ['docs/mcp', 'builds/mcp'] });
    const [docs, builds] = provider.moreServiceUrls;
    const catalogFile = join(workspace.dir, 'connectors.json');
    await writeFile(
      catalogFile,
      JSON.stringify({
        version: 1,
        groups: [{ id: 'acme', name: 'Acme', description: 'Acme’s servers; one Acme login covers all of them.' }],
        entries: [
          {
            id: 'acme-tracker',
            name: 'Acme Tracker',
            description: 'Issues in Acme.',
            url: provider.mcpUrl,
            transport: 'streamable-http',
            auth: 'oauth',
            signInGroup: 'acme',
          },
          {
            id: 'acme-docs',
            name: 'Acme Docs',
            description: 'Documents in Acme.',
            url: docs,
            transport: 'streamable-http',
            auth: 'oauth',
            signInGroup: 'acme',
          },
          {
            id: 'acme-builds',
            name: 'Acme Builds',
            description: 'Builds in Acme.',
            url: builds,
            transport: 'streamable-http',
            auth: 'oauth',
            signInGroup: 'acme',
          },
        ],
      }),
    );
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_CATALOG_FILE: catalogFile });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });

  after(async () => {
    delete process.env.BROWSER;
    await fx?.close();
    await provider?.close();
    await workspace?.leave();
  });

  it('lists the own catalog file first, with its sign-in group', async () => {
    const { json } = await api('GET', '/catalog?search=acme');
    assert.deepEqual(
      json.entries.map((e: { id: string; source: string; signInGroup?: string }) => [e.id, e.source, e.signInGroup]),
      [
        ['acme-tracker', 'custom', 'acme'],
        ['acme-docs', 'custom', 'acme'],
        ['acme-builds', 'custom', 'acme'],
      ],
    );
    assert.deepEqual(json.groups, [{ id: 'acme', name: 'Acme', description: 'Acme’s servers; one Acme login covers all of them.' }]);
  });

  it('connects three services with one sign-in, each with a token for its own server', async () => {
    const names = await addGroup();
    const before = { ...provider.counters };
    const started = await api('POST', `/mcp/place/connect?workspace_path=${PLACE}`, { names });
    assert.equal(started.status, 200, JSON.stringify(started.json));
    assert.deepEqual(
      started.json.signIns.map((s: { name: string }) => s.name),
      names,
    );
    assert.equal(started.json.signIns[0].authorizationUrl, started.json.authorizationUrl, 'the chain starts at the first');
    assert.match(started.json.authorizationUrl, new RegExp(`^${provider.issuer}`));
    // $BROWSER walks the whole chain: the provider's pages, the callback, the next service's sign-in...
    await waitFor(async () => (await states(names)).every((s) => s === 'connected'), 30_000, 'all three to be connected');
    assert.equal(provider.counters.logins - before.logins, 1, 'the person signed in once');
    // This provider (oidc-provider) grants a refresh token (offline_access) only on a consent
    // screen, so each service keeps its prompt=consent: a login without one would end within the hour.
    assert.equal(provider.counters.consents - before.consents, 3, 'a consent per service, where refresh tokens need one');
    assert.equal(provider.counters.registrations - before.registrations, 1, 'one registration at their one authorization server');
    assert.equal(provider.counters.codeExchanges - before.codeExchanges, 3, 'one authorization per service');
    // The first sign-in names the three servers; each later one only its own.
    const asked = new URL(started.json.authorizationUrl as string).searchParams.getAll('resource');
    assert.deepEqual(asked, [provider.mcpUrl, ...provider.moreServiceUrls]);

    const url = new URL(fx.url);
    url.searchParams.set('workspace_path', PLACE);
    const agent = new Client({ name: 'agent', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fx.token()}` } } }),
    );
    const tools = (await agent.listTools()).tools.map((t) => t.name);
    const accepted = provider.acceptedAccessTokens.length;
    for (const name of names) {
      assert.ok(tools.includes(`${name}__echo`), `${name}'s tools are listed`);
      const result = (await agent.callTool({ name: `${name}__echo`, arguments: { text: name } })) as CallToolResult;
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(textOf(result), `echo: ${name}`);
    }
    // Each server accepted a token only if it was issued for that server (the fixture checks the audience).
    assert.equal(new Set(provider.acceptedAccessTokens.slice(accepted)).size, 3, 'three different tokens');
    await agent.close();
    await removeAll(names);
  });

  it('shows how each sign-in of the chain ended when the provider refuses, and leaves them at Sign in', async () => {
    const names = await addGroup();
    try {
      const started = await api('POST', `/mcp/place/connect?workspace_path=${PLACE}`, { names, open_browser: false });
      assert.equal(started.status, 200, JSON.stringify(started.json));
      provider.setConsent('deny');
      const walk = await walkSignIn(started.json.authorizationUrl);
      assert.equal(walk.callbacks, 3, 'the browser went on to every service');
      assert.equal(walk.callback!.status, 400);
      assert.match(walk.callback!.body, /Sign-in failed/);
      for (const display of ['Acme Tracker', 'Acme Docs', 'Acme Builds'])
        assert.match(walk.callback!.body, new RegExp(`${display}: not signed in\\. .*declined`, 'i'));
      assert.deepEqual(await states(names), ['sign-in', 'sign-in', 'sign-in']);
    } finally {
      provider.setConsent('approve');
      await removeAll(names);
    }
  });

  it('goes on through the rest of the group from one service’s own link, when the first window was closed', async () => {
    const names = await addGroup();
    try {
      const started = await api('POST', `/mcp/place/connect?workspace_path=${PLACE}`, { names, open_browser: false });
      assert.equal(started.status, 200, JSON.stringify(started.json));
      // The chain's window was closed before anything happened; the person opens the second service's link.
      const walk = await walkSignIn(started.json.signIns[1].authorizationUrl);
      assert.equal(walk.callbacks, 2, 'the second and then the third');
      assert.equal(walk.callback!.status, 200);
      assert.deepEqual(await states(names), ['sign-in', 'connected', 'connected']);
    } finally {
      await removeAll(names);
    }
  });

  it('checks every connection before starting any sign-in', async () => {
    const names = await addGroup();
    const refused = await api('POST', `/mcp/place/connect?workspace_path=${PLACE}`, {
      names: [...names, 'u0000000000__nope'],
      open_browser: false,
    });
    assert.equal(refused.status, 404, JSON.stringify(refused.json));
    assert.match(refused.json.error.message, /nope/);
    const empty = await api('POST', `/mcp/place/connect?workspace_path=${PLACE}`, { names: [] });
    assert.equal(empty.status, 400);
    await removeAll(names);
  });
});
