import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'jsonc-parser';
import { projectFiles, userFiles, type ClientFile, type Machine } from './client-files.js';
import { entryFor, writeServerEntry } from './client-entry.js';
import { ClientConfigError } from './client-config-errors.js';

// Each client's file as people keep them: other servers, other settings, comments (VS Code),
// tabs, Windows line ends, no final newline. Writing this server's entry must leave every byte
// of that as it was, with the entry added in the file's own style and a backup beside it.
const SAMPLES: Record<string, string> = {
  'claude-desktop':
    '{\n  "mcpServers": {\n    "files": { "command": "npx", "args": ["-y", "@acme/files"] }\n  },\n  "globalShortcut": "Ctrl+Space"\n}\n',
  cursor: '{\r\n\t"mcpServers": {\r\n\t\t"linear": {\r\n\t\t\t"url": "https://mcp.linear.app/mcp"\r\n\t\t}\r\n\t}\r\n}',
  vscode:
    '// My servers\n{\n    "servers": {\n        // the one for notes\n        "notes": { "type": "stdio", "command": "notes-mcp", },\n    },\n    "inputs": [],\n}\n',
  'claude-code':
    '{\n  "numStartups": 42,\n  "theme": "dark",\n  "mcpServers": {},\n  "projects": { "/srv/app": { "allowedTools": [] } }\n}\n',
};

describe('writing this server into a client configuration', () => {
  let home: string;
  let machine: Machine;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'pw-clients-'));
    machine = { home, platform: 'linux', env: {} };
  });
  after(() => rm(home, { recursive: true, force: true }));

  const fileOf = (client: string): ClientFile => userFiles(machine).find((f) => f.client === client)!;

  for (const [client, original] of Object.entries(SAMPLES)) {
    it(`${client}: adds the entry and keeps the rest of the file byte for byte, with a backup`, async () => {
      const file = fileOf(client);
      await mkdir(join(file.path, '..'), { recursive: true });
      await writeFile(file.path, original, { mode: 0o640 });
      const entry = entryFor(file.client, { url: 'http://127.0.0.1:9100/mcp', token: 'tok.en-123' });
      const written = await writeServerEntry(file, 'persona-workspace', entry, { replace: false, now: new Date('2030-01-02T03:04:05Z') });
      const next = await readFile(file.path, 'utf8');
      // One insertion: the file without it is the original, to the byte.
      const inserted = next.length - original.length;
      let same = 0;
      while (same < original.length && next[same] === original[same]) same += 1;
      let tail = 0;
      while (tail < original.length && next[next.length - 1 - tail] === original[original.length - 1 - tail]) tail += 1;
      assert.ok(inserted > 0 && same + tail >= original.length, `not one insertion:\n${next}`);
      const added = next.slice(same, same + inserted);
      if (original.includes('\r\n')) assert.doesNotMatch(added, /(^|[^\r])\n/, 'Windows line ends stay Windows line ends');
      const servers = file.serversAt.reduce((node: any, key) => node[key], parse(next));
      assert.deepEqual(servers['persona-workspace'], entry);
      assert.equal(await readFile(written.backup!, 'utf8'), original);
      assert.equal((await stat(file.path)).mode & 0o777, 0o640, 'the mode is kept');
      assert.ok(!JSON.stringify(written.entry).includes('tok.en-123'), 'what is said shows no token');
      assert.match(JSON.stringify(written.entry), /<token>/);
      assert.equal(written.created, false);
    });
  }

  it('refuses to replace an entry of that name unless asked, and leaves the file alone', async () => {
    const file = fileOf('cursor');
    const before = await readFile(file.path, 'utf8');
    await assert.rejects(
      writeServerEntry(file, 'persona-workspace', entryFor('cursor', { url: 'http://127.0.0.1:9100/mcp' }), { replace: false }),
      ClientConfigError,
    );
    assert.equal(await readFile(file.path, 'utf8'), before);
    const replaced = await writeServerEntry(file, 'persona-workspace', entryFor('cursor', { url: 'http://127.0.0.1:9100/mcp' }), {
      replace: true,
      now: new Date('2030-01-02T03:04:06Z'),
    });
    assert.equal(replaced.replaced, true);
  });

  it('keeps a file written on one line on one line', async () => {
    const file = projectFiles(join(home, 'one-line'), machine)[0]!;
    await mkdir(join(home, 'one-line', '.cursor'), { recursive: true });
    await writeFile(file.path, '{"mcpServers":{"a":{"url":"https://a.example/mcp"}}}');
    await writeServerEntry(file, 'pw', { url: 'http://127.0.0.1:9100/mcp' }, { replace: false });
    assert.equal(
      await readFile(file.path, 'utf8'),
      '{"mcpServers":{"a":{"url":"https://a.example/mcp"},"pw": {"url":"http://127.0.0.1:9100/mcp"}}}',
    );
  });

  it('makes a missing file, and never writes into a file that does not parse or through a link', async () => {
    const project = join(home, 'project');
    const [cursorProject, vscodeProject] = projectFiles(project, machine);
    const made = await writeServerEntry(cursorProject!, 'pw', entryFor('cursor', { url: 'http://127.0.0.1:9100/mcp' }), { replace: false });
    assert.equal(made.created, true);
    assert.equal(made.backup, undefined);
    assert.deepEqual(parse(await readFile(cursorProject!.path, 'utf8')), { mcpServers: { pw: { url: 'http://127.0.0.1:9100/mcp' } } });

    await mkdir(join(project, '.vscode'), { recursive: true });
    await writeFile(vscodeProject!.path, '{ "servers": { broken ');
    await assert.rejects(writeServerEntry(vscodeProject!, 'pw', {}, { replace: false }), /not valid JSON/);
    assert.equal(await readFile(vscodeProject!.path, 'utf8'), '{ "servers": { broken ');

    const target = join(home, 'elsewhere.json');
    await writeFile(target, '{}');
    const claudeProject = projectFiles(join(home, 'linked'), machine).find((f) => f.client === 'claude-code' && f.writable)!;
    await mkdir(join(home, 'linked'));
    await symlink(target, claudeProject.path);
    await assert.rejects(writeServerEntry(claudeProject, 'pw', {}, { replace: false }), /symbolic link/);
    assert.equal(await readFile(target, 'utf8'), '{}');
  });

  it('writes Claude Desktop an mcp-remote bridge, with the token in its environment', () => {
    assert.deepEqual(entryFor('claude-desktop', { url: 'https://box.example.com/mcp', token: 't' }), {
      command: 'npx',
      args: ['-y', 'mcp-remote', 'https://box.example.com/mcp', '--header', 'Authorization:${AUTH_HEADER}'],
      env: { AUTH_HEADER: 'Bearer t' },
    });
    assert.deepEqual(entryFor('claude-desktop', { url: 'http://10.0.0.5:9100/mcp' }).args, [
      '-y',
      'mcp-remote',
      'http://10.0.0.5:9100/mcp',
      '--allow-http',
    ]);
  });
});
