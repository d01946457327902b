import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';

describe('the page API: agent tokens and recent activity', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown, token = adminToken) => callApi(controlUrl, token, method, path, body);

  before(async () => {
    fx = await startHost({}, { WORKSPACE_JWT_SECRET: 'agent-access-test-secret' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());

  it('creates a token shown once, lists it without the token, and revokes it at once', async () => {
    const created = await api('POST', '/tokens', { name: 'ci agent', expires: '7d', workspace_path: 'Crew/alpha/runs/3' });
    assert.equal(created.status, 201, created.text);
    const { id, token, workspacePath } = created.json.token;
    assert.equal(workspacePath, 'Crew/alpha', 'the place, normalized to its root');

    const { client } = await fx.connect(token);
    assert.ok((await client.listTools()).tools.length > 0, 'the new token works on /mcp');

    const list = await api('GET', '/tokens');
    assert.ok(list.json.tokens.some((t: { id: string; name: string }) => t.id === id && t.name === 'ci agent'));
    assert.ok(!list.text.includes(token), 'the list never shows the token');

    assert.equal((await api('DELETE', `/tokens/${id}`)).status, 200);
    await assert.rejects(client.listTools(), 'refused once revoked');
    assert.equal((await api('DELETE', '/tokens/ffffffffffffffff')).status, 404);
    assert.equal((await api('POST', '/tokens', { name: '' })).status, 400);
  });

  it('shows recent tool calls from the audit log', async () => {
    const { client } = await fx.connect(await fx.token('activity'));
    await client.callTool({ name: 'bash', arguments: { command: 'true' } });
    await waitFor(
      async () => (await api('GET', '/activity?limit=5')).json.records.some((r: { tool: string }) => r.tool === 'bash'),
      5_000,
      'the bash call in the activity',
    );
    const { json } = await api('GET', '/activity?limit=5');
    const last = json.records.at(-1);
    assert.equal(last.tool, 'bash');
    assert.equal(last.outcome, 'ok');
    assert.match(last.caller, /^token:/);
    assert.equal((await api('GET', '/activity?limit=0')).status, 400);
  });

  it('keeps agent access to the person who runs the app', async () => {
    const person = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('agent-access-test-secret'));
    for (const [method, path, body] of [
      ['GET', '/tokens'],
      ['POST', '/tokens', { name: 'x' }],
      ['GET', '/activity'],
    ] as const) {
      const answer = await api(method, path, body, person);
      assert.equal(answer.status, 401, `${method} ${path}`);
      assert.match(answer.json.error.message, /agent tokens and JWTs work on the MCP endpoint only/);
    }
  });
});
