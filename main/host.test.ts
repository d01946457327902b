import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { processAlive, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';

describe('the agent endpoint over real HTTP', () => {
  let fx: HostFixture;
  let dir: string;
  let skillsDir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-host-'));
    skillsDir = join(dir, 'skills');
    fx = await startHost({}, { WORKSPACE_SKILLS_DIR: skillsDir });
  });
  after(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the machine tools, each with annotations and a description', async () => {
    const { client } = await fx.connect(await fx.token());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['bash', 'edit', 'manage_my_mcp_servers', 'read', 'skill', 'write']);
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 40, `${tool.name} has a description`);
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name} says whether it is read-only`);
    }
    assert.equal(tools.find((t) => t.name === 'read')!.annotations!.readOnlyHint, true);
    assert.equal(tools.find((t) => t.name === 'bash')!.annotations!.destructiveHint, true);
  });

  it('writes, reads and edits a file, and refuses a failing edit without touching it', async () => {
    const { client } = await fx.connect(await fx.token());
    const file = join(dir, 'nested', 'notes.txt');
    const written = await client.callTool({ name: 'write', arguments: { path: file, content: 'alpha\nbeta\ngamma\n' } });
    assert.notEqual(written.isError, true, textOf(written));
    assert.equal(await readFile(file, 'utf8'), 'alpha\nbeta\ngamma\n');

    const read = await client.callTool({ name: 'read', arguments: { path: file, offset: 2, limit: 1 } });
    const [text, note] = (read.content as Array<{ text: string }>).map((c) => c.text);
    assert.equal(text, 'beta\n');
    assert.match(note!, /lines 2-2 of 3/);

    const edited = await client.callTool({ name: 'edit', arguments: { path: file, edits: [{ old_string: 'beta', new_string: 'BETA' }] } });
    assert.notEqual(edited.isError, true, textOf(edited));
    assert.match(textOf(edited), /-beta\n\+BETA/);
    assert.equal(await readFile(file, 'utf8'), 'alpha\nBETA\ngamma\n');

    const failed = await client.callTool({
      name: 'edit',
      arguments: {
        path: file,
        edits: [
          { old_string: 'alpha', new_string: 'A' },
          { old_string: 'missing', new_string: 'x' },
        ],
      },
    });
    assert.equal(failed.isError, true);
    assert.match(textOf(failed), /edit 2/i);
    assert.equal(await readFile(file, 'utf8'), 'alpha\nBETA\ngamma\n', 'a failed edit changes nothing');

    const missing = await client.callTool({ name: 'read', arguments: { path: join(dir, 'nope.txt') } });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /not found|does not exist|no such/i);
  });

  it('runs bash with separate stdout, stderr and exit code, in the server working directory', async () => {
    const { client } = await fx.connect(await fx.token());
    const result = await client.callTool({ name: 'bash', arguments: { command: 'echo out; echo err >&2; pwd; exit 3' } });
    const structured = result.structuredContent as { exitCode: number; stdout: string; stderr: string };
    assert.equal(structured.exitCode, 3);
    assert.equal(structured.stdout, `out\n${process.cwd()}\n`);
    assert.equal(structured.stderr, 'err\n');
  });

  it('sends progress with recent output while a command runs, when asked', async () => {
    const { client } = await fx.connect(await fx.token());
    const messages: string[] = [];
    const result = await client.callTool(
      { name: 'bash', arguments: { command: 'for i in 1 2 3; do echo tick-$i; sleep 0.7; done' } },
      undefined,
      { onprogress: (p) => messages.push(p.message ?? ''), resetTimeoutOnProgress: true },
    );
    assert.equal((result.structuredContent as { exitCode: number }).exitCode, 0);
    assert.ok(
      messages.some((m) => m.includes('tick-')),
      `progress carried output: ${JSON.stringify(messages)}`,
    );
  });

  it('kills the whole process tree when the caller cancels', async () => {
    const { client } = await fx.connect(await fx.token());
    const pidFile = join(dir, 'grandchild.pid');
    const controller = new AbortController();
    const call = client.callTool({ name: 'bash', arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }, undefined, {
      signal: controller.signal,
    });
    await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim().length > 0, 10_000, 'the grandchild to start');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    assert.ok(processAlive(pid));
    controller.abort();
    await assert.rejects(call);
    await waitFor(() => !processAlive(pid), 10_000, 'the grandchild to die');
  });

  it('caps a flood of output, keeping head and tail and saving the whole to a file', async () => {
    const { client } = await fx.connect(await fx.token());
    const bytes = 50 * 1024 * 1024;
    const result = await client.callTool({
      name: 'bash',
      arguments: { command: `echo FIRST; head -c ${bytes} /dev/zero | tr '\\0' x; echo; echo LAST` },
    });
    const structured = result.structuredContent as { stdout: string; stdoutFullOutputPath?: string };
    assert.ok(structured.stdout.length < 256 * 1024, `stdout returned is capped (${structured.stdout.length})`);
    assert.match(structured.stdout, /^FIRST\n/);
    assert.match(structured.stdout, /LAST\n$/);
    assert.match(textOf(result), /elided/);
    const savedPath = structured.stdoutFullOutputPath;
    assert.ok(savedPath, 'the full output path is given');
    assert.ok(textOf(result).includes(savedPath), 'and named in the text the agent reads');
    assert.ok((await stat(savedPath)).size > bytes, 'the full output is saved');
    await rm(savedPath, { force: true });
  });

  it('loads skills and serves the catalog, seeing a skill added on disk without a restart', async () => {
    const { client } = await fx.connect(await fx.token());
    const before = await client.readResource({ uri: 'resource://skills' });
    assert.doesNotMatch(JSON.stringify(before), /deploy-site/);

    await mkdir(join(skillsDir, 'deploy-site', 'scripts'), { recursive: true });
    await writeFile(
      join(skillsDir, 'deploy-site', 'SKILL.md'),
      '---\nname: deploy-site\ndescription: Deploys the site to staging.\n---\nRun scripts/deploy.sh.\n',
    );
    await writeFile(join(skillsDir, 'deploy-site', 'scripts', 'deploy.sh'), 'echo deploy\n');

    const catalog = await client.readResource({ uri: 'resource://skills' });
    assert.match((catalog.contents[0] as { text: string }).text, /deploy-site.*Deploys the site to staging\./);
    const skill = await client.callTool({ name: 'skill', arguments: { name: 'deploy-site' } });
    assert.match(textOf(skill), /Run scripts\/deploy\.sh\./);
    assert.match(textOf(skill), /scripts\/deploy\.sh/);

    const unknown = await client.callTool({ name: 'skill', arguments: { name: 'nope' } });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /deploy-site/, 'an unknown skill lists the known ones');

    const cwd = await client.readResource({ uri: 'resource://cwd' });
    assert.equal((cwd.contents[0] as { text: string }).text, process.cwd());
  });

  it('notifies a subscribed session over its GET stream when the skill catalog changes, and logs invalid skills', async () => {
    const { client } = await fx.connect(await fx.token());
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await client.subscribeResource({ uri: 'resource://skills' });
    await assert.rejects(client.subscribeResource({ uri: 'resource://nope' }), /Cannot subscribe/);

    await mkdir(join(skillsDir, 'release-notes'), { recursive: true });
    await writeFile(
      join(skillsDir, 'release-notes', 'SKILL.md'),
      '---\nname: release-notes\ndescription: Drafts release notes.\n---\nbody\n',
    );
    await waitFor(() => updates.includes('resource://skills'), 10_000, 'notifications/resources/updated');

    await mkdir(join(skillsDir, 'Broken'), { recursive: true });
    await writeFile(join(skillsDir, 'Broken', 'SKILL.md'), '---\nname: broken\n---\n');
    await waitFor(() => fx.logs.some((l) => l.includes('Broken') && l.includes('skipped')), 10_000, 'the invalid skill to be logged');
  });

  it('ends a session on DELETE; its id is unknown afterwards', async () => {
    const token = await fx.token();
    const { client, transport } = await fx.connect(token);
    const sessionId = transport.sessionId!;
    assert.ok(sessionId);
    await transport.terminateSession();
    const response = await fetch(fx.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 404);
    await client.close();
  });

  it('does not let another caller use a session', async () => {
    const { transport } = await fx.connect(await fx.token('first'));
    const response = await fetch(fx.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await fx.token('second')}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId!,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(response.status, 404);
  });

  it('writes every tool call to the audit log with the caller and the platform ids, never contents', async () => {
    const { client } = await fx.connect(await fx.token('auditor'));
    const secretText = 'contents-that-must-not-be-logged';
    await client.callTool({
      name: 'write',
      arguments: { path: join(dir, 'audited.txt'), content: secretText },
      _meta: { execution_id: 'exec-42', workspace_id: 'ws-7' },
    });
    const log = join(fx.stateDir, 'audit.log');
    await waitFor(async () => (await readFile(log, 'utf8').catch(() => '')).includes('exec-42'), 5_000, 'the audit record');
    const text = await readFile(log, 'utf8');
    const record = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((r) => r.executionId === 'exec-42');
    assert.equal(record.tool, 'write');
    assert.equal(record.workspaceId, 'ws-7');
    assert.equal(record.outcome, 'ok');
    assert.match(record.caller, /^token:/);
    assert.equal(typeof record.durationMs, 'number');
    assert.ok(!text.includes(secretText));
    assert.ok(!text.includes('audited.txt'), 'not even the path');
  });
});

describe('host lifecycle', () => {
  it('closes idle sessions', async () => {
    // 0.02 minutes: sessions with no open request expire after about a second.
    const fx = await startHost({}, { WORKSPACE_SESSION_IDLE_TIMEOUT: '0.02' });
    try {
      // Plain HTTP, so no GET stream holds the session open the way a connected client's does.
      const token = await fx.token();
      const post = (body: object, sessionId?: string) =>
        fetch(fx.url, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...(sessionId && { 'Mcp-Session-Id': sessionId }),
          },
          body: JSON.stringify(body),
        });
      const init = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      const sessionId = init.headers.get('mcp-session-id')!;
      await init.text();
      assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status, 202);
      assert.equal((await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId)).status, 200);
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal((await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, sessionId)).status, 404, 'the idle session expired');
    } finally {
      await fx.close();
    }
  });

  it('stop() kills running commands and their children, closes sessions and releases the port', async () => {
    const fx = await startHost();
    const dir = await mkdtemp(join(tmpdir(), 'pw-stop-'));
    try {
      const { client } = await fx.connect(await fx.token());
      const pidFile = join(dir, 'pid');
      const call = client.callTool({ name: 'bash', arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }, undefined, {
        timeout: 20_000,
      });
      await waitFor(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim().length > 0, 10_000, 'the grandchild');
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      const port = Number(new URL(fx.url).port);

      await fx.host.stop();
      assert.deepEqual(fx.host.status, { state: 'stopped' });
      await waitFor(() => !processAlive(pid), 10_000, 'the grandchild to die');
      const result = await call;
      assert.match(textOf(result), /server is shutting down/, 'the caller is told why its command stopped');
      await new Promise<void>((resolve, reject) => {
        const probe = createServer()
          .once('error', reject)
          .listen(port, '127.0.0.1', () => probe.close(() => resolve()));
      });
    } finally {
      await fx.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('can start again after a stop, and reports a busy port in words', async () => {
    const fx = await startHost();
    try {
      await fx.host.stop();
      const port = Number(new URL(await fx.host.start()).port);
      assert.equal(fx.host.status.state, 'running');

      const { Host } = await import('./host.js');
      const { loadConfig } = await import('./config.js');
      const env = { WORKSPACE_STATE_DIR: fx.stateDir, WORKSPACE_SECRET_STORE: 'file', WORKSPACE_REGISTRY_URL: '' };
      const clash = new Host(loadConfig({ port, controlPort: 0 }, env), { env, log: () => {} });
      await assert.rejects(clash.start());
      await clash.close();
      const status = clash.status;
      assert.equal(status.state, 'failed');
      assert.match(status.state === 'failed' ? status.error : '', new RegExp(`Port ${port} .* already in use`));
    } finally {
      await fx.close();
    }
  });

  it('reports a busy control port in words, leaving the state dir to the next try, which listens there', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    const stateDir = await mkdtemp(join(tmpdir(), 'pw-control-port-'));
    const { Host } = await import('./host.js');
    const { loadConfig } = await import('./config.js');
    const env = { WORKSPACE_STATE_DIR: stateDir, WORKSPACE_SECRET_STORE: 'file', WORKSPACE_REGISTRY_URL: '' };
    const host = new Host(loadConfig({ port: 0, controlPort: port }, env), { env, log: () => {} });
    try {
      await assert.rejects(host.open(), new RegExp(`Port ${port} on 127.0.0.1 is already in use.*--control-port`));
      await new Promise((resolve) => blocker.close(resolve));
      assert.equal(await host.open(), `http://127.0.0.1:${port}`);
      const answer = await fetch(`http://127.0.0.1:${port}/api/server`);
      assert.equal(answer.status, 401, 'the control plane answers, and asks who is calling');
    } finally {
      blocker.close();
      await host.close();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
