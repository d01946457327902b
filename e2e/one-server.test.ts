import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startHost, type HostFixture } from '../test/support/host-fixture.js';
import { startUpstream, type UpstreamFixture } from './fixtures/upstream-server.js';

// One server per state dir, and the CLI asks it: a second server refuses and says where the first
// is; `connections add` of a server that never answers returns at once, saying "checking".

const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));

function cli(stateDir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      WORKSPACE_STATE_DIR: stateDir,
      WORKSPACE_SECRET_STORE: 'file',
      WORKSPACE_REGISTRY_URL: '',
    };
    const child = spawn(process.execPath, [CLI, ...args], { env });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

describe('one server per state dir, and the CLI asks it', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let hanging: UpstreamFixture;

  before(async () => {
    hanging = await startUpstream({ name: 'hanging' });
    hanging.setMode('hang');
    // A minute to answer: an add that waited for the check would take that long.
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_UPSTREAM_TIMEOUT: '60' });
    controlUrl = await fx.host.open();
  });

  after(async () => {
    // The hanging server goes first: the host's close waits for its check of it, which then ends at once, not at its 60 s limit.
    await hanging?.close();
    await fx?.close();
  });

  it('refuses a second server on the same state dir, saying where the first one is', async () => {
    const second = await cli(fx.stateDir, ['--port', '0', '--control-port', '0']);
    assert.equal(second.code, 2, second.stdout + second.stderr);
    assert.match(
      second.stderr,
      new RegExp(`already runs on the state dir .*\\(pid ${process.pid}; its page at ${controlUrl}, agents at ${fx.url}\\)`),
    );
    assert.doesNotMatch(second.stdout, /listening/);
    // `open` still finds the first one.
    const open = await cli(fx.stateDir, ['open']);
    assert.equal(open.code, 0, open.stderr);
    assert.match(open.stdout, new RegExp(`${controlUrl}/login\\?token=`));
  });

  it('adds a server that accepts and never answers at once, as checking, saying how to follow it', async () => {
    const added = await cli(fx.stateDir, ['connections', 'add', '--url', hanging.url, '--name', 'Hanging']);
    assert.equal(added.code, 0, added.stderr);
    // Its server is given 60 s; a CLI start on a busy machine takes a few.
    assert.ok(added.ms < 30_000, `took ${added.ms.toFixed(0)} ms`);
    assert.match(added.stdout, /^Added Hanging to This machine as \S+ \(checking: /);
    assert.match(
      added.stdout,
      /The server goes on checking it; the page shows how that ends, and so does: persona-mcp-workspace connections show \S+/,
    );
    assert.doesNotMatch(added.stderr, /No server runs/, 'it asked the running server');
    const listed = await cli(fx.stateDir, ['connections', 'list', '--json']);
    const connection = JSON.parse(listed.stdout).find((c: { displayName: string }) => c.displayName === 'Hanging');
    assert.equal(connection.state, 'checking', 'the server is still asking it');
  });
});
