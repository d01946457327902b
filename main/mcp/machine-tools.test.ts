import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { startHost, waitFor, type HostFixture } from '../../test/support/host-fixture.js';
import { CommandRunner } from '../machine/command-runner.js';
import { machineTools } from './machine-tools.js';
import type { ToolExtra } from './session-tool.js';

// Every tool through the real agent endpoint: HTTP, auth, sessions and the audited runner.
let dir: string;
let skillsDir: string;
let fx: HostFixture;
let client: Client;

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function texts(result: CallToolResult): string[] {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`));
}

async function alive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return !/^\d+ \(.*\) [ZX] /.test(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''));
}

describe('machine tools over MCP', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-machine-'));
    skillsDir = join(dir, 'skills');
    await mkdir(join(skillsDir, 'deploy', 'scripts'), { recursive: true });
    await writeFile(
      join(skillsDir, 'deploy', 'SKILL.md'),
      '---\nname: deploy\ndescription: Deploy the app.\n---\n# Deploy\nRun scripts/run.sh.\n',
    );
    await writeFile(join(skillsDir, 'deploy', 'scripts', 'run.sh'), 'echo deploy\n');
    await mkdir(join(skillsDir, 'lint'));
    await writeFile(join(skillsDir, 'lint', 'SKILL.md'), '---\nname: lint\ndescription: Lint the code.\n---\nRun the linter.\n');

    fx = await startHost({}, { WORKSPACE_SKILLS_DIR: skillsDir, WORKSPACE_SHELL_MAX_TIMEOUT: '30' });
    ({ client } = await fx.connect(await fx.token()));
  });
  after(async () => {
    await fx.close();
    await rm(dir, { recursive: true, force: true });
  });
  it('marks each machine tool always loaded, for clients that defer tools behind a search', async () => {
    const { tools } = await client.listTools();
    for (const name of ['read', 'write', 'edit', 'bash', 'skill']) {
      assert.equal(tools.find((t) => t.name === name)?._meta?.['anthropic/alwaysLoad'], true, name);
    }
  });

  it('tells the agent at initialize which machine, directory and place it works in, and when to use skill and manage_my_mcp_servers', () => {
    const instructions = client.getInstructions() ?? '';
    for (const part of [hostname(), process.cwd(), 'This machine', 'no MCP connections', 'skill tool', 'manage_my_mcp_servers']) {
      assert.ok(instructions.includes(part), `missing ${part} in:\n${instructions}`);
    }
    assert.ok(Buffer.byteLength(instructions) < 1024);
  });

  it('lists the five tools, each with annotations and a description stating its caps', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual([...byName.keys()].sort(), ['bash', 'edit', 'manage_my_mcp_servers', 'read', 'skill', 'write']);
    for (const tool of tools) {
      const hints = tool.annotations ?? {};
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        assert.equal(typeof hints[hint], 'boolean', `${tool.name}.${hint}`);
      }
      assert.ok((tool.description ?? '').length > 100, tool.name);
    }
    assert.equal(byName.get('read')!.annotations!.readOnlyHint, true);
    assert.equal(byName.get('bash')!.annotations!.openWorldHint, true);
    assert.match(byName.get('read')!.description!, /first 2000 lines.*256 KiB/);
    assert.match(byName.get('bash')!.description!, /default 30, at most 30/);
    assert.match(byName.get('bash')!.description!, /first 16 KiB and last 16 KiB/);
    assert.ok(byName.get('bash')!.outputSchema);
  });

  it('read returns the text as is, with the range note in its own block', async () => {
    const path = join(dir, 'notes.txt');
    await writeFile(path, 'one\ntwo\nthree\n');
    const result = await call('read', { path, offset: 2, limit: 1 });
    assert.equal(result.isError, undefined);
    assert.deepEqual(texts(result), ['two\n', '[lines 2-2 of 3; call read with offset 3 to continue]']);
  });

  it('read with a negative offset returns the last lines, and its description says so', async () => {
    const { tools } = await client.listTools();
    assert.match(
      tools.find((tool) => tool.name === 'read')!.description!,
      /negative offset counts from the end: offset -10 returns the last 10 lines/,
    );
    const path = join(dir, 'log.txt');
    await writeFile(path, 'one\ntwo\nthree\nfour\n');
    const result = await call('read', { path, offset: -2 });
    assert.equal(result.isError, undefined);
    assert.deepEqual(texts(result), ['three\nfour\n', '[lines 3-4 of 4]']);
  });

  it('read returns a small image as an image block, and other binary as base64 text', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    await writeFile(join(dir, 'pic.png'), png);
    const image = await call('read', { path: join(dir, 'pic.png') });
    assert.equal(image.content[0]!.type, 'image');
    assert.equal(image.content[0]!.type === 'image' && image.content[0]!.data, png.toString('base64'));
    assert.equal(image.content[0]!.type === 'image' && image.content[0]!.mimeType, 'image/png');

    await writeFile(join(dir, 'blob.bin'), Buffer.from([0, 1, 2]));
    const blob = await call('read', { path: join(dir, 'blob.bin') });
    assert.equal(texts(blob)[0], 'AAEC');
    assert.match(texts(blob)[1]!, /not text/);
  });

  it('turns machine errors into tool errors with their message', async () => {
    const result = await call('read', { path: join(dir, 'missing.txt') });
    assert.equal(result.isError, true);
    assert.match(texts(result)[0]!, /missing\.txt: no such file/);
  });

  it('write creates a file and says so', async () => {
    const path = join(dir, 'made', 'new.txt');
    const result = await call('write', { path, content: 'hello' });
    assert.deepEqual(texts(result), [`Created ${path} (5 bytes).`]);
    assert.equal(await readFile(path, 'utf8'), 'hello');
    assert.deepEqual(texts(await call('write', { path, content: 'bye' })), [`Overwrote ${path} (3 bytes).`]);
  });

  it('edit shows a diff, and a failed edit leaves the file alone', async () => {
    const path = join(dir, 'code.ts');
    await writeFile(path, 'const a = 1;\nconst b = 2;\n');
    const result = await call('edit', { path, edits: [{ old_string: 'const b = 2;', new_string: 'const b = 3;' }] });
    assert.equal(
      texts(result)[0],
      `Edited ${path}: 1 edit, 1 replacement.\n\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\n+const b = 3;`,
    );

    const failed = await call('edit', {
      path,
      edits: [
        { old_string: 'const a', new_string: 'let a' },
        { old_string: 'nowhere', new_string: 'x' },
      ],
    });
    assert.equal(failed.isError, true);
    assert.match(texts(failed)[0]!, /^edit 2 of 2 failed: old_string was not found/);
    assert.equal(await readFile(path, 'utf8'), 'const a = 1;\nconst b = 3;\n');
  });

  it('bash labels exit code, stdout and stderr, and returns them structured', async () => {
    const result = await call('bash', { command: 'echo out; echo err >&2; exit 2' });
    assert.equal(result.isError, undefined);
    assert.match(texts(result)[0]!, /^exit code 2 after \d+\.\ds\n--- stdout ---\nout\n--- stderr ---\nerr$/);
    assert.deepEqual(
      { ...result.structuredContent, durationMs: 0 },
      {
        exitCode: 2,
        signal: null,
        timedOut: false,
        cancelled: false,
        serverStopped: false,
        outputTooLarge: false,
        durationMs: 0,
        stdout: 'out\n',
        stderr: 'err\n',
      },
    );
  });

  it('bash says when a timeout was lowered to the maximum and when it ran out', async () => {
    const result = await call('bash', { command: 'sleep 60', timeout: 0.5 });
    assert.match(
      texts(result)[0]!,
      /^ended by signal SIGTERM after .*\nTimed out after 0\.5s: the command and every process it started were stopped/,
    );
    assert.equal(result.structuredContent?.['timedOut'], true);
    assert.equal(result.isError, true);
    const lowered = await call('bash', { command: 'true', timeout: 100 });
    assert.match(texts(lowered)[0]!, /^exit code 0 after .*\nThe timeout was lowered to 30s, this server's maximum\./);
  });

  it('bash points to the full output file when the middle was elided', async () => {
    const result = await call('bash', { command: 'seq 1 20000' });
    const path = result.structuredContent?.['stdoutFullOutputPath'] as string;
    assert.match(texts(result)[0]!, new RegExp(`bytes elided[\\s\\S]*\\[\\d+ bytes in all; the full stdout is in ${path}`));
    assert.equal((await readFile(path, 'utf8')).split('\n').length, 20001);
  });

  it('bash with tty says stdout and stderr are merged', async () => {
    const result = await call('bash', { command: 'echo hi', tty: true });
    assert.match(texts(result)[0]!, /--- output \(terminal: stdout and stderr merged\) ---\nhi/);
  });

  it('bash sends progress notifications with recent output when asked', async () => {
    const updates: Progress[] = [];
    const result = (await client.callTool(
      { name: 'bash', arguments: { command: 'for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.5; done' } },
      undefined,
      { onprogress: (progress) => updates.push(progress) },
    )) as CallToolResult;
    assert.equal(result.structuredContent?.['exitCode'], 0);
    assert.ok(updates.length >= 2, `${updates.length} updates`);
    assert.deepEqual(
      updates.map((update) => update.progress),
      updates.map((_, i) => i + 1),
    );
    assert.match(updates[0]!.message!, /^running for 1s; last output: tick \d$/);
  });

  it('bash stops the command and everything it started when the client cancels', async () => {
    const pidPath = join(dir, 'cancel.pid');
    const controller = new AbortController();
    const pending = client.callTool({ name: 'bash', arguments: { command: `sleep 300 & echo $! > ${pidPath}; wait` } }, undefined, {
      signal: controller.signal,
    });
    const pid = await waitFor(
      async () => Number(await readFile(pidPath, 'utf8').catch(() => '')) || undefined,
      10_000,
      'the background pid',
    );
    controller.abort();
    await assert.rejects(pending);
    await waitFor(async () => !(await alive(pid)), 10_000, 'the background job to die');
  });

  it('bash answers a cancelled command with an error result', async () => {
    // Over MCP a cancelled request gets no answer at all, so the tool is called as the session calls it.
    const bash = machineTools({ skillsDir, commands: new CommandRunner({ maxTimeoutSeconds: 30 }) }).find(
      (tool) => tool.definition.name === 'bash',
    )!;
    const controller = new AbortController();
    const started = join(dir, 'cancelled-started');
    const pending = bash.call({ command: `touch ${started}; sleep 30` }, { signal: controller.signal } as ToolExtra);
    await waitFor(
      () =>
        readFile(started).then(
          () => true,
          () => false,
        ),
      10_000,
      'the command to start',
    );
    controller.abort();
    const result = await pending;
    assert.equal(result.isError, true);
    assert.match(texts(result)[0]!, /^ended by signal SIGTERM after .*\nCancelled: the command and every process it started were stopped/);
  });

  it('bash answers a command stopped for printing too much with an error result that says what to do', async () => {
    const commands = new CommandRunner({ maxTimeoutSeconds: 30, outputDir: join(dir, 'limited'), maxSavedOutputBytes: 1024 ** 2 });
    const bash = machineTools({ skillsDir, commands }).find((tool) => tool.definition.name === 'bash')!;
    const result = await bash.call({ command: 'yes' }, { signal: new AbortController().signal } as ToolExtra);
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent?.['outputTooLarge'], true);
    assert.match(
      texts(result)[0]!,
      /\nIts output passed 1 GiB, the most this server saves for one command: .*Redirect big outputs to a file of your own/,
    );
  });

  it('manage_my_mcp_servers refuses an action without the argument it needs, with an error result', async () => {
    const connect = await call('manage_my_mcp_servers', { action: 'connect' });
    assert.equal(connect.isError, true);
    assert.deepEqual(texts(connect), ['connect needs catalog: the id of a connector from the catalog.']);
    const remove = await call('manage_my_mcp_servers', { action: 'remove' });
    assert.equal(remove.isError, true);
    assert.match(texts(remove)[0]!, /^remove needs name/);
    const list = await call('manage_my_mcp_servers', { action: 'list' });
    assert.equal(list.isError, undefined);
    assert.match(texts(list)[0]!, /has no MCP connections yet/);
  });

  it('skill returns the instructions, folder and bundled files; an unknown name lists the known ones', async () => {
    const result = await call('skill', { name: 'deploy' });
    assert.equal(
      texts(result)[0],
      [
        '# Skill: deploy',
        'Deploy the app.',
        '',
        `Folder: ${join(skillsDir, 'deploy')}`,
        'Bundled files (relative to the folder; fetch them with read):',
        '- scripts/run.sh',
        '',
        '# Deploy\nRun scripts/run.sh.',
      ].join('\n'),
    );
    const unknown = await call('skill', { name: 'nope' });
    assert.equal(unknown.isError, true);
    assert.equal(texts(unknown)[0], 'There is no skill named "nope". Installed skills: deploy, lint.');
  });

  it('passes every tool call through the audited runner with the tool name', async () => {
    let tools = new Set<string>();
    await waitFor(
      async () => {
        const log = await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '');
        tools = new Set(
          log
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((line) => (JSON.parse(line) as { tool: string }).tool),
        );
        return tools.size === 6;
      },
      10_000,
      'every tool in the audit log',
    );
    assert.deepEqual([...tools].sort(), ['bash', 'edit', 'manage_my_mcp_servers', 'read', 'skill', 'write']);
  });

  it('answers invalid arguments and unknown tools with a tool error that says what is wrong', async () => {
    const invalid = await call('read', { path: 5 });
    assert.equal(invalid.isError, true);
    assert.match(texts(invalid)[0]!, /^Invalid arguments for read: .*path/);
    const missing = await call('edit', { path: join(dir, 'x') });
    assert.match(texts(missing)[0]!, /Invalid arguments for edit: .*edits/);
    const unknown = await call('rm', {});
    assert.equal(unknown.isError, true);
    assert.match(texts(unknown)[0]!, /no tool named "rm"/);
  });

  it("the README's tool table lists every tool the server offers", async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const table = readme.slice(readme.indexOf('| tool | what it does |'));
    const listed = [...table.slice(0, table.indexOf('\n\n')).matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    const { tools } = await client.listTools();
    assert.deepEqual(listed.sort(), tools.map((tool) => tool.name).sort());
  });

  it('publishes JSON Schema inputs with the required fields', async () => {
    const { tools } = await client.listTools();
    const edit = tools.find((t) => t.name === 'edit')!;
    assert.deepEqual(edit.inputSchema.required, ['path', 'edits']);
    assert.equal(edit.inputSchema.type, 'object');
    assert.ok(!('$schema' in edit.inputSchema));
    const bash = tools.find((t) => t.name === 'bash')!;
    assert.deepEqual(bash.outputSchema?.required?.includes('exitCode'), true);
  });

  it('serves resource://cwd and resource://skills', async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((resource) => resource.uri).sort(), ['resource://cwd', 'resource://skills']);
    const text = async (uri: string): Promise<unknown> => {
      const { contents } = await client.readResource({ uri });
      return 'text' in contents[0]! ? contents[0].text : contents[0];
    };
    assert.equal(await text('resource://cwd'), process.cwd());
    assert.equal(await text('resource://skills'), 'deploy: Deploy the app.\nlint: Lint the code.');
  });
});
