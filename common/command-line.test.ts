import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandLine } from '../main/connections/local/local-command.js';
import { CommandLineError, splitCommandLine } from './command-line.js';

describe('a command line split into words', () => {
  it('splits on blanks, as a shell does', () => {
    assert.deepEqual(splitCommandLine('  npx -y\t@playwright/mcp@latest  '), ['npx', '-y', '@playwright/mcp@latest']);
    assert.deepEqual(splitCommandLine(''), []);
  });

  it('keeps quoted words whole, and expands nothing', () => {
    assert.deepEqual(splitCommandLine(`uvx mcp-server-git --repository "/home/ann/My Repo" '$HOME' "a\\"b" c\\ d ""`), [
      'uvx',
      'mcp-server-git',
      '--repository',
      '/home/ann/My Repo',
      '$HOME',
      'a"b',
      'c d',
      '',
    ]);
    assert.deepEqual(splitCommandLine('node server.js | tee log'), ['node', 'server.js', '|', 'tee', 'log']);
  });

  it('reads back what the server shows', () => {
    const args = ['--dir', 'My Files', "it's", 'plain'];
    assert.deepEqual(splitCommandLine(commandLine({ command: '/opt/my server/bin', args })), ['/opt/my server/bin', ...args]);
  });

  it('says when a quote is not closed', () => {
    assert.throws(() => splitCommandLine('npx "unclosed'), CommandLineError);
    assert.throws(() => splitCommandLine("npx 'unclosed"), /single quote is not closed/);
  });
});
