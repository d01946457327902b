import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkLocalCommand, commandLine, localId, LocalCommandError, programName } from './local-command.js';

describe('local commands', () => {
  it('keeps the program, its arguments, each variable with the secret it comes from, and normalized hosts', () => {
    assert.deepEqual(
      checkLocalCommand({
        command: ' npx ',
        args: ['-y', '@playwright/mcp'],
        env: { TOKEN: 'PW_TOKEN' },
        hosts: ['CDN.Example.com.', 'cdn.example.com'],
      }),
      {
        command: 'npx',
        args: ['-y', '@playwright/mcp'],
        env: [{ name: 'TOKEN', secret: 'PW_TOKEN' }],
        hosts: ['cdn.example.com'],
      },
    );
  });

  it('refuses what a process cannot be given, saying what to fix', () => {
    for (const [input, message] of [
      [{ command: '  ' }, /needs a command/],
      [{ command: 'npx', args: ['a\0b'] }, /NUL/],
      [{ command: 'npx', env: { 'A=B': 'S' } }, /environment variable name/],
      [{ command: 'npx', env: { '1A': 'S' } }, /environment variable name/],
      [{ command: 'npx', hosts: ['https://x.example/'] }, /not a host name/],
    ] as const) {
      assert.throws(
        () => checkLocalCommand(input),
        (error: unknown) => error instanceof LocalCommandError && message.test(error.message),
      );
    }
  });

  it('names a server after the package a launcher runs, else the program', () => {
    assert.equal(programName({ command: 'npx', args: ['-y', '@playwright/mcp@latest'] }), '@playwright/mcp');
    assert.equal(programName({ command: '/usr/bin/uvx', args: ['--from', 'git+https://x', 'mcp-server-git'] }), 'mcp-server-git');
    assert.equal(programName({ command: '/opt/tools/my-server', args: ['--stdio'] }), 'my-server');
    assert.equal(localId({ command: 'npx', args: ['-y', '@playwright/mcp'] }), 'local-playwright-mcp');
    assert.equal(localId({ command: 'npx', args: [] }, 'My Files'), 'local-my-files');
    const long = localId({ command: 'npx', args: ['@a-very-long-scope-name/an-even-longer-package-name'] });
    assert.ok(long.length <= 32 && /^local-.*-[0-9a-f]{6}$/.test(long), long);
  });

  it('shows the command line with arguments quoted where a shell would need it', () => {
    assert.equal(commandLine({ command: 'npx', args: ['-y', 'pkg', 'two words', "it's"] }), `npx -y pkg 'two words' 'it'\\''s'`);
  });
});
