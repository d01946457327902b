// uninstall, as a user runs it: what the app made (keychain entries in the real keychain, the state
// dir, the settings folder, saved outputs of servers that are gone) is removed and named; nothing is
// removed while a server runs on the state dir, nor without a yes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commandLine } from '../main/connections/local/local-command.js';
import { KEYCHAIN_CHECK_ACCOUNT } from '../main/secrets/keychain-store.js';
import { KEYTAR_SKIP } from '../test/support/native-modules.js';
import { waitFor } from '../test/support/wait.js';
import { BUILT_CLI, cliSandbox } from './fixtures/cli-process.js';

const exists = async (path: string) => (await stat(path).catch(() => undefined)) !== undefined;

/** The accounts the keychain holds under `service`, read with keytar itself (no store of the app's in between). */
async function keychainAccounts(service: string): Promise<string[]> {
  const name = 'keytar';
  const keytar = ((await import(name)) as { default: { findCredentials(service: string): Promise<Array<{ account: string }>> } }).default;
  return (await keytar.findCredentials(service)).map((found) => found.account).sort();
}

/** A pid that no process has now: one that has just ended. */
function deadPid(): number {
  const pid = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  return Number(pid);
}

describe('uninstall', { skip: KEYTAR_SKIP }, () => {
  const cli = cliSandbox('pw-cli-uninstall-');
  let outputs: string;
  let settingsDir: string;

  before(async () => {
    settingsDir = join(cli.root, 'config', 'persona-mcp-workspace');
    await mkdir(settingsDir, { recursive: true });
    await writeFile(join(settingsDir, 'settings.json'), '{"shellMaxTimeout": 60}');
    assert.equal((await cli.run(['token', 'create', '--name', 'to-remove'])).code, 0);
    assert.equal((await cli.run(['secrets', 'set', 'KEY', '--workspace-path', 'Crew/a'], {}, 'sk-uninstall-2231')).code, 0);
    // Saved outputs as servers leave them: one whose server is gone, one of a server that runs (this test).
    outputs = join(cli.root, 'tmp', `persona-workspace-output-${process.getuid!()}`);
    for (const server of [`${deadPid()}-0123abcd`, `${process.pid}-89abcdef`]) {
      const place = join(outputs, server, 'place-0123456789abcdef');
      await mkdir(place, { recursive: true, mode: 0o700 });
      await writeFile(join(place, '20261203T031500Z-0a1b2c3d-stdout.log'), 'output');
    }
  });
  after(() => cli.remove());

  it('needs a yes: on no terminal, --yes', async () => {
    const refused = await cli.run(['uninstall']);
    assert.equal(refused.code, 2);
    assert.equal(
      refused.stderr,
      "persona-mcp-workspace: uninstall removes this app's state, settings and keychain entries: run it on a terminal to confirm, or add --yes.\n",
    );
    assert.ok(await exists(cli.stateDir));
  });

  it('asks on a terminal, and removes nothing on a no', async () => {
    // On a real terminal made by util-linux's script, which passes on everything the CLI wrote
    // before it ends. (node-pty drops what it has not read 200 ms after the exit, which a busy
    // machine can miss.)
    const command = `stty cols 200 rows 40; exec ${commandLine({ command: process.execPath, args: [BUILT_CLI, 'uninstall'] })}`;
    const terminal = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], { env: cli.env() });
    let screen = '';
    terminal.stdout.setEncoding('utf8').on('data', (data: string) => (screen += data));
    const exited = new Promise<number | null>((resolve) => terminal.once('close', resolve));
    await waitFor(() => screen.includes('Remove all of it? [y/N]'), 20_000, 'the question');
    assert.match(screen, new RegExp(`This removes:\\r\\n.*keychain \\(service ${cli.service}\\).*\\r\\n.*the state dir ${cli.stateDir}`));
    terminal.stdin.write('n\r');
    assert.equal(await exited, 0, screen);
    terminal.stdin.end();
    assert.match(screen, /Nothing was removed\./);
    assert.ok(await exists(cli.stateDir));
    assert.ok(!(await exists(join(cli.stateDir, 'control.json'))), 'the state dir is free again');
  });

  it('refuses while a server runs on the state dir, removing nothing', async () => {
    const server = await cli.serve();
    try {
      const refused = await cli.run(['uninstall', '--yes']);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        `persona-mcp-workspace: A persona-mcp-workspace server runs on the state dir ${cli.stateDir} (pid ${server.child.pid}): uninstall does not remove what a running server uses. Stop it first, then run uninstall again. Nothing was removed.\n`,
      );
      assert.ok(await exists(join(cli.stateDir, 'secret-store.json')));
      assert.ok((await keychainAccounts(cli.service)).length > 1);
    } finally {
      await server.stop();
    }
  });

  it('removes nothing while the keychain that holds its logins cannot be reached', async () => {
    const refused = await cli.run(['uninstall', '--yes'], { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' });
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^persona-mcp-workspace: The OS keychain holds this app's logins \(recorded in \S+secret-store\.json\) but could not be reached: .* Nothing was removed; unlock the keychain and run uninstall again\.\n$/,
    );
    assert.ok(await exists(join(cli.stateDir, 'secret-store.json')));
    assert.ok(await exists(settingsDir));
    assert.ok(!(await exists(join(cli.stateDir, 'control.json'))), 'the state dir is free again');
  });

  it('removes the keychain entries (the check entry too), the state dir, the settings and the outputs of servers that are gone', async () => {
    const before = await keychainAccounts(cli.service);
    assert.ok(before.includes(KEYCHAIN_CHECK_ACCOUNT) && before.some((account) => account.startsWith('place-secret:')), before.join(' '));
    const removed = await cli.run(['uninstall', '--yes']);
    assert.equal(removed.code, 0, removed.stderr);
    const live = `${process.pid}-89abcdef`;
    assert.equal(
      removed.stdout,
      [
        `Removed ${before.length} entries from the OS keychain (service ${cli.service}), its check entry among them.`,
        `Removed the state dir ${cli.stateDir}.`,
        `Removed the settings folder ${settingsDir}.`,
        `Left ${outputs}: it holds what a running server or another user's files use.`,
        `The program itself stays: remove it with "npm rm -g persona-mcp-workspace", or delete its folder if you run it from a clone.`,
        '',
      ].join('\n'),
    );
    assert.deepEqual(await keychainAccounts(cli.service), []);
    assert.ok(!(await exists(cli.stateDir)));
    assert.ok(!(await exists(settingsDir)));
    assert.deepEqual(await readdir(outputs), [live], 'the folder of the server that is gone went; the running one stays');
    assert.deepEqual(await readdir(join(outputs, live, 'place-0123456789abcdef')), ['20261203T031500Z-0a1b2c3d-stdout.log']);

    // Again: nothing is left to remove, and it says so.
    const again = await cli.run(['uninstall', '--yes']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stdout,
      new RegExp(
        `^No entries of this app in the OS keychain \\(service ${cli.service}\\)\\.\nNo state dir at ${cli.stateDir}\\.\nNo settings folder at `,
      ),
    );
    assert.deepEqual(await keychainAccounts(cli.service), [], 'the check entry it wrote to see the keychain unlocked went too');
    assert.ok(!(await exists(cli.stateDir)));
  });
});
