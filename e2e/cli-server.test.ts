// The server as the command runs it: its start line and sign-in link, `open`, a busy port, serving
// /mcp from WORKSPACE_CWD, --no-auth, and a clean stop on a signal.
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { processAlive, textOf } from '../test/support/host-fixture.js';
import { waitFor } from '../test/support/wait.js';
import { cliSandbox } from './fixtures/cli-process.js';

describe('the server the command runs', () => {
  const cli = cliSandbox('pw-cli-server-');
  after(() => cli.remove());

  it('open prints a fresh one-time link for the running server, with its lifetime, and opens it with $BROWSER', async () => {
    const none = await cli.run(['open']);
    assert.equal(none.code, 2);
    assert.equal(
      none.stderr,
      `persona-mcp-workspace: No persona-mcp-workspace server is running on the state dir ${cli.stateDir}. Start it with: persona-mcp-workspace\n`,
    );

    const server = await cli.serve();
    try {
      assert.match(server.stdout(), /this link signs you in once, within 10 minutes; "persona-mcp-workspace open" makes a new one\): http/);
      const browserLog = join(cli.workDir, 'browser.log');
      const browser = join(cli.workDir, 'browser.sh');
      await writeFile(browser, `#!/bin/sh\necho "$1" > ${browserLog}\n`, { mode: 0o755 });
      const opened = await cli.run(['open'], { BROWSER: browser });
      assert.equal(opened.code, 0, opened.stderr);
      const link =
        /^Open this link in a browser on this machine; it signs you in once, within 10 minutes: (http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)\n$/.exec(
          opened.stdout,
        )?.[1];
      assert.ok(link, opened.stdout);
      await waitFor(async () => (await readFile(browserLog, 'utf8').catch(() => '')).trim() === link, 10_000, '$BROWSER to get the link');

      // The page's "Sign in first" says what to run.
      const controlUrl = new URL(link).origin;
      const signedOut = await fetch(`${controlUrl}/api/places`);
      assert.equal(signedOut.status, 401);
      assert.match(
        ((await signedOut.json()) as { error: { message: string } }).error.message,
        /^Sign in first: run "persona-mcp-workspace open" on this machine/,
      );

      const signedIn = await fetch(link, { redirect: 'manual' });
      assert.equal(signedIn.status, 303);
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      assert.equal((await fetch(`${controlUrl}/api/places`, { headers: { cookie } })).status, 200);
      const again = await fetch(link, { redirect: 'manual' });
      assert.equal(again.status, 401, 'the link works once');
      assert.match(await again.text(), /For a fresh one, run "persona-mcp-workspace open" on this machine\./);
    } finally {
      await server.stop();
    }
    await assert.rejects(readFile(join(cli.stateDir, 'control.json')), /ENOENT/, 'a stopped server leaves no record');
  });

  it('says which control port is busy, with no stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const result = await cli.run(['--port', '0', '--control-port', String(port)]);
    blocker.close();
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      new RegExp(
        `persona-mcp-workspace: Port ${port} on 127\\.0\\.0\\.1 is already in use\\. Stop the other program or choose another port with --control-port\\.\n$`,
      ),
    );
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  });

  it('says which port is busy instead of crashing', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const result = await cli.run(['--port', String(port), '--control-port', '0']);
    blocker.close();
    assert.equal(result.code, 2);
    assert.match(result.stderr, new RegExp(`Port ${port} on 127.0.0.1 is already in use`));
  });

  it('serves /mcp from WORKSPACE_CWD, prints one startup line, and stops cleanly on SIGTERM', async () => {
    const token = (await cli.run(['token', 'create', '--name', 'e2e'])).stdout.trim();
    const server = await cli.serve();
    assert.match(
      server.stdout().split('\n')[0]!,
      /^persona-mcp-workspace listening on http:\/\/127\.0\.0\.1:\d+\/mcp \(auth: JWT; app tokens\)$/,
    );
    const login = /(http:\/\/127\.0\.0\.1:\d+\/login\?token=\S+)/.exec(server.stdout())?.[1];
    assert.ok(login, 'a one-time login link for the page is printed');
    const signedIn = await fetch(login, { redirect: 'manual' });
    assert.equal(signedIn.status, 303);
    assert.match(signedIn.headers.get('set-cookie') ?? '', /HttpOnly; SameSite=Strict/);

    const client = await server.connect(token);
    const cwd = await client.readResource({ uri: 'resource://cwd' });
    assert.equal((cwd.contents[0] as { text: string }).text, cli.workDir);
    const pwd = await client.callTool({ name: 'bash', arguments: { command: 'pwd' } });
    assert.equal((pwd.structuredContent as { stdout: string }).stdout, `${cli.workDir}\n`);
    // A big output is saved to a file the agent is told about, with how long it is kept; it goes when the server stops.
    const big = await client.callTool({ name: 'bash', arguments: { command: 'seq 1 100000' } });
    const saved = (big.structuredContent as { stdoutFullOutputPath: string }).stdoutFullOutputPath;
    assert.equal((await readFile(saved, 'utf8')).split('\n').length, 100_001);
    assert.match(
      textOf(big),
      /the full stdout is in \S+ \(read it, or grep it with bash\), kept until \S+ at most: removed a day after it was saved, when this server stops/,
    );

    // A command with a grandchild still running when the signal comes.
    const pidFile = join(cli.workDir, 'grandchild.pid');
    const running = client.callTool({ name: 'bash', arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }, undefined, {
      timeout: 20_000,
    });
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '', 10_000, 'the grandchild');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());

    assert.equal(await server.stop(), 0);
    assert.match(textOf(await running), /shutting down/);
    await waitFor(() => !processAlive(pid), 10_000, 'the grandchild to die');
    await assert.rejects(stat(dirname(saved)), /ENOENT/, "the server's saved outputs are gone");
    const port = Number(new URL(server.mcpUrl).port);
    await new Promise<void>((resolve, reject) => {
      const probe = createServer()
        .once('error', reject)
        .listen(port, '127.0.0.1', () => probe.close(() => resolve()));
    });
    await client.close();
  });

  it('serves without auth on loopback when asked', async () => {
    const server = await cli.serve(['--no-auth']);
    try {
      assert.match(server.stdout().split('\n')[0]!, /auth: off/);
      const client = await server.connect();
      assert.equal((await client.listTools()).tools.length, 6);
      await client.close();
    } finally {
      assert.equal(await server.stop('SIGINT'), 0);
    }
  });
});
