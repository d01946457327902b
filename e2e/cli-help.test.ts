// The command's version, its help and its refusals of bad flags and commands, from the built bin.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { cliSandbox } from './fixtures/cli-process.js';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

describe('the persona-mcp-workspace command', () => {
  const cli = cliSandbox('pw-cli-help-');
  after(() => cli.remove());

  it('prints its version and its help with every flag and variable', async () => {
    const version = await cli.run(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), pkg.version);

    const help = await cli.run(['--help']);
    assert.equal(help.code, 0);
    for (const word of [
      '--port',
      '--host',
      '--no-auth',
      '--version',
      'token create',
      'WORKSPACE_CWD',
      'WORKSPACE_SKILLS_DIR',
      'WORKSPACE_SHELL_MAX_TIMEOUT',
      'WORKSPACE_STATE_DIR',
      'WORKSPACE_JWT_SECRET',
      'WORKSPACE_JWKS_URL',
    ]) {
      assert.ok(help.stdout.includes(word), `help mentions ${word}`);
    }
  });

  it('refuses --no-auth on a non-loopback address, and bad flags, with a clear message', async () => {
    const open = await cli.run(['--no-auth', '--host', '0.0.0.0']);
    assert.equal(open.code, 2);
    assert.match(open.stderr, /--no-auth is only allowed on a loopback address/);
    assert.doesNotMatch(open.stderr, /at .*\.js:\d+/, 'no stack trace for a user error');

    const port = await cli.run(['--port', 'abc']);
    assert.equal(port.code, 2);
    assert.match(port.stderr, /--port abc is not a port number/);

    const unknown = await cli.run(['--frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--help/);

    const typo = await cli.run(['tokn', 'list']);
    assert.equal(typo.code, 2);
    assert.equal(
      typo.stderr,
      'persona-mcp-workspace: Unknown command "tokn". Did you mean "token"? Run with --help to see the commands.\n',
    );
    const help = await cli.run(['token', 'create', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage:\n {2}persona-mcp-workspace token create --name NAME /);
    assert.doesNotMatch(help.stdout, /token list/, 'only the command asked about');
    assert.match((await cli.run(['--help'])).stdout, /Exit status: 0 done, 1 failed .*\n.*3 not found/);
  });

  it('answers help as a command too', async () => {
    const help = await cli.run(['help']);
    assert.equal(help.code, 0);
    assert.equal(help.stdout, (await cli.run(['--help'])).stdout);
    assert.match(help.stdout, /--config FILE/);
  });
});
