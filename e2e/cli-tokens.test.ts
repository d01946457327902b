// Agent tokens from the command line: created, listed without the token, and revoked, which a
// running server honours at once.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { cliSandbox } from './fixtures/cli-process.js';
import { INITIALIZE_BODY } from '../test/support/raw-http.js';

describe('agent tokens from the command line', () => {
  const cli = cliSandbox('pw-cli-tokens-');
  after(() => cli.remove());

  it('creates, lists and revokes tokens; a running server refuses a revoked one at once', async () => {
    const created = await cli.run(['token', 'create', '--name', 'ci-agent', '--expires', '12h', '--workspace-path', 'Crew/alpha']);
    assert.equal(created.code, 0);
    const token = created.stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'stdout is the token alone');
    const id = /Created token ([0-9a-f]{16})/.exec(created.stderr)?.[1];
    assert.ok(id, created.stderr);

    const list = await cli.run(['token', 'list', '--json']);
    const entry = (JSON.parse(list.stdout) as Array<{ id: string; name: string; workspacePath?: string }>).find((t) => t.id === id);
    assert.deepEqual({ name: entry?.name, workspacePath: entry?.workspacePath }, { name: 'ci-agent', workspacePath: 'Crew/alpha' });
    assert.ok(!list.stdout.includes(token) && !(await cli.run(['token', 'list'])).stdout.includes(token), 'list never shows the token');

    const server = await cli.serve();
    try {
      const client = await server.connect(token);
      assert.equal((await client.listTools()).tools.length, 6);

      const revoked = await cli.run(['token', 'revoke', id]);
      assert.equal(revoked.code, 0, revoked.stderr);
      const response = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: INITIALIZE_BODY,
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /invalid_token/);
      await client.close();
    } finally {
      await server.stop();
    }

    const again = await cli.run(['token', 'revoke', 'ffffffffffffffff']);
    assert.equal(again.code, 3, 'not found');
    assert.match(again.stderr, /No agent token with id ffffffffffffffff/);
  });
});
