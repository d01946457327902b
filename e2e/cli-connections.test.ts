// A place's secrets and MCP connections from the command line: added, measured against a real
// upstream, edited (its own OAuth app too) and removed; bad place paths and URLs refused.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { filesUnder } from '../test/support/secrets.js';
import { cliSandbox } from './fixtures/cli-process.js';
import { startUpstream } from './fixtures/upstream-server.js';

describe("a place's secrets and connections from the command line", () => {
  const cli = cliSandbox('pw-cli-connections-');
  after(() => cli.remove());

  it("manages a place's secrets and connections from the command line", async () => {
    const value = 'sk-cli-2b9e71d0';
    const set = await cli.run(['secrets', 'set', 'DOCS_KEY', '--workspace-path', 'Crew/alpha'], {}, `${value}\n`);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /Saved the secret DOCS_KEY of Crew alpha/);
    const names = await cli.run(['secrets', 'list', '--workspace-path', 'Crew/alpha']);
    assert.equal(names.stdout.trim(), 'DOCS_KEY');
    assert.ok(!names.stdout.includes(value) && !set.stdout.includes(value));
    const empty = await cli.run(['secrets', 'set', 'EMPTY', '--workspace-path', 'Crew/alpha']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /reads the value from stdin/);

    const added = await cli.run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--catalog', 'context7', '--secret', 'DOCS_KEY']);
    assert.equal(added.code, 0, added.stderr);
    const name = /as (u[0-9a-f]{8}__context7)/.exec(added.stdout)?.[1];
    assert.ok(name, added.stdout);
    const list = await cli.run(['connections', 'list', '--workspace-path', 'Crew/alpha', '--json']);
    const [connection] = JSON.parse(list.stdout) as Array<{
      name: string;
      owner: string;
      state: string;
      reason?: string;
      secretName: string;
    }>;
    assert.deepEqual(
      { name: connection?.name, owner: connection?.owner, secretName: connection?.secretName },
      { name, owner: 'local', secretName: 'DOCS_KEY' },
    );
    // Its server was asked with the key; from here it cannot be reached (no internet, or private targets refused), and says so.
    assert.notEqual(connection?.state, 'connected');
    assert.ok(connection?.reason, list.stdout);
    assert.ok(!list.stdout.includes(value));

    const http = await cli.run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', 'http://example.com/mcp']);
    assert.equal(http.code, 2);
    assert.match(http.stderr, /does not use https/);
    const metadata = await cli.run(['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', 'https://169.254.169.254/latest']);
    assert.equal(metadata.code, 2);
    assert.match(metadata.stderr, /169\.254\.169\.254.*(link-local|metadata)/);
    const removed = await cli.run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match((await cli.run(['connections', 'list', '--workspace-path', 'Crew/alpha'])).stdout, /has no MCP connections/);
    const gone = await cli.run(['secrets', 'remove', 'DOCS_KEY', '--workspace-path', 'Crew/alpha']);
    assert.equal(gone.code, 0, gone.stderr);
  });

  it('refuses a place path with a bidi or invisible character, and an over-long server URL, saying why', async () => {
    for (const path of ['Crew/al\u202Etxt.ahp', 'Crew/alpha\u200B']) {
      for (const args of [
        ['connections', 'list'],
        ['secrets', 'list'],
        ['places', 'policy', path],
        ['token', 'create', '--name', 'hidden'],
      ]) {
        const answer = await cli.run(args[0] === 'places' ? args : [...args, '--workspace-path', path]);
        assert.equal(answer.code, 2, `${args.join(' ')}: ${answer.stderr}`);
        assert.match(
          answer.stderr,
          /contains a control, bidi or invisible character|no control, bidi or invisible characters/,
          args.join(' '),
        );
      }
    }
    assert.doesNotMatch((await cli.run(['token', 'list'])).stdout, /hidden/);
    const long = await cli.run([
      'connections',
      'add',
      '--workspace-path',
      'Crew/alpha',
      '--url',
      `https://mcp.example.com/mcp?pad=${'a'.repeat(2048)}`,
    ]);
    assert.equal(long.code, 2, long.stderr);
    assert.match(long.stderr, /The URL is 2080 characters long; a server URL may have at most 2048/);
  });

  it('measures a connection: a refused key says so, Test after fixing the secret says connected', async () => {
    const upstream = await startUpstream({ name: 'issues', apiKey: { header: 'X-Api-Key', value: 'sk-right-5e1f' } });
    const local = { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '3' };
    try {
      assert.equal((await cli.run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha'], local, 'sk-wrong\n')).code, 0);
      const added = await cli.run(
        [
          'connections',
          'add',
          '--workspace-path',
          'Crew/alpha',
          '--url',
          upstream.url,
          '--name',
          'Issues',
          '--header',
          'X-Api-Key',
          '--secret',
          'ISSUES_KEY',
        ],
        local,
      );
      assert.equal(added.code, 0, added.stderr);
      assert.match(added.stdout, /key-refused: .*refused the API key \(HTTP 401\)/);
      const name = /as (u[0-9a-f]{8}__[a-z0-9-]+)/.exec(added.stdout)?.[1];
      assert.ok(name, added.stdout);
      const list = await cli.run(['connections', 'list', '--workspace-path', 'Crew/alpha'], local);
      assert.match(list.stdout, /Issues .*key-refused/);
      const refused = await cli.run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local);
      assert.equal(refused.code, 1);
      assert.match(refused.stdout, /key-refused/);

      // A secret the place has is not replaced without --replace.
      const kept = await cli.run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha'], local, 'sk-right-5e1f\n');
      assert.notEqual(kept.code, 0);
      assert.match(kept.stderr, /Crew alpha already has a secret named "ISSUES_KEY"; it was not changed\. Issues sends it\. .*--replace/);
      assert.match((await cli.run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local)).stdout, /key-refused/);
      assert.equal(
        (await cli.run(['secrets', 'set', 'ISSUES_KEY', '--workspace-path', 'Crew/alpha', '--replace'], local, 'sk-right-5e1f\n')).code,
        0,
      );
      const fixed = await cli.run(['connections', 'test', name, '--workspace-path', 'Crew/alpha'], local);
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
      assert.match(fixed.stdout, /Issues \(u[0-9a-f]{8}__[a-z0-9-]+\): connected \(5 tools, checked /);
      assert.match(
        (await cli.run(['connections', 'list', '--workspace-path', 'Crew/alpha'], local)).stdout,
        /Issues .*connected \(5 tools/,
      );
      const edited = await cli.run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--tool-off', 'echo', '--name', 'Issue tracker'],
        local,
      );
      assert.equal(edited.code, 0, edited.stderr);
      assert.match(edited.stdout, /Changed Issue tracker .*connected/);
      const shown = await cli.run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local);
      assert.match(shown.stdout, /^Issue tracker \(u[0-9a-f]{8}__[a-z0-9-]+\), .*login, http/);
      assert.match(shown.stdout, /\n {2}off {2}echo {2}Echo the text back/);
      assert.match(shown.stdout, /\n {2}on {3}add /);
      assert.equal((await cli.run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha'], local)).code, 0);
    } finally {
      await upstream.close();
    }
  });

  it('sets and drops the own OAuth app of a connection with connections edit, its secret from stdin and never in a file', async () => {
    const upstream = await startUpstream({ name: 'closed' });
    upstream.setMode('sign-in'); // it asks for an OAuth sign-in, so it is added as an OAuth connection
    const local = { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '3' };
    try {
      const added = await cli.run(
        ['connections', 'add', '--workspace-path', 'Crew/alpha', '--url', upstream.url, '--name', 'Closed'],
        local,
      );
      assert.equal(added.code, 0, added.stderr);
      const name = /as (u[0-9a-f]{8}__[a-z0-9-]+)/.exec(added.stdout)?.[1];
      assert.ok(name, added.stdout);
      const edited = await cli.run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--client-id', 'my-cli-app', '--client-secret-stdin'],
        local,
        'cli-own-secret-77\n',
      );
      assert.equal(edited.code, 0, edited.stderr);
      assert.match(edited.stdout, /Changed Closed .*sign-in/);
      assert.match(edited.stdout, /Sign in to it again from the page to use your OAuth app my-cli-app\./);
      const shown = await cli.run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local);
      assert.match(shown.stdout, /\n {2}signs in with your own OAuth app my-cli-app\n/);
      const json = JSON.parse((await cli.run(['connections', 'show', name, '--workspace-path', 'Crew/alpha', '--json'], local)).stdout);
      assert.deepEqual(json.ownApp, { clientId: 'my-cli-app' });
      const files = await Promise.all((await filesUnder(cli.stateDir)).map((f) => readFile(f, 'latin1')));
      assert.ok(!files.some((text) => text.includes('cli-own-secret-77')), 'the client secret is in the keychain only');
      const empty = await cli.run(
        ['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--client-id', 'x', '--client-secret-stdin'],
        local,
      );
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /reads the secret from stdin, which was empty/);

      const dropped = await cli.run(['connections', 'edit', name, '--workspace-path', 'Crew/alpha', '--no-own-app'], local);
      assert.equal(dropped.code, 0, dropped.stderr);
      assert.match(dropped.stdout, /to use it without your own OAuth app/);
      assert.doesNotMatch((await cli.run(['connections', 'show', name, '--workspace-path', 'Crew/alpha'], local)).stdout, /own OAuth app/);
      assert.equal((await cli.run(['connections', 'remove', name, '--workspace-path', 'Crew/alpha'], local)).code, 0);
    } finally {
      await upstream.close();
    }
  });
});
