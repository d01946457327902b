// Where keytar and node-pty could not be built: a copy of the built program whose node_modules has
// every package but those two, as npm leaves an install whose native builds failed. The install's
// check, the server's start and `status` name each with the one step that fixes it, and the
// keychain's own tests say they were skipped and why.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { statusAnswer } from '../common/api/server.js';
import { BUILD_DIR } from '../test/support/built.js';
import { waitFor } from '../test/support/wait.js';
import { cliSandbox, type CliSandbox } from './fixtures/cli-process.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../', import.meta.url));
const HIDDEN = ['keytar', 'node-pty'];

/** The repository's built program and tests, with a node_modules that lacks `HIDDEN`. */
async function treeWithout(root: string): Promise<void> {
  await Promise.all([
    cp(join(repo, 'dist'), join(root, 'dist'), { recursive: true }),
    cp(join(repo, BUILD_DIR), join(root, BUILD_DIR), { recursive: true }),
    cp(join(repo, 'package.json'), join(root, 'package.json')),
    cp(join(repo, 'scripts', 'check-native-modules.mjs'), join(root, 'scripts', 'check-native-modules.mjs')),
    mkdir(join(root, 'node_modules')),
  ]);
  for (const name of await readdir(join(repo, 'node_modules'))) {
    if (HIDDEN.includes(name) || name.startsWith('.')) continue;
    await symlink(join(repo, 'node_modules', name), join(root, 'node_modules', name));
  }
}

/** How this machine's fix begins: its package manager's command for what building needs. */
const debian = existsSync('/etc/debian_version');

describe('an install where keytar and node-pty could not be built', () => {
  let root: string;
  let cli: CliSandbox;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'pw-no-native-'));
    await treeWithout(root);
    cli = cliSandbox('pw-no-native-cli-', join(root, 'dist', 'main', 'cli.js'));
  });
  after(async () => {
    await cli.remove();
    await rm(root, { recursive: true, force: true });
  });

  it('names each at install, with what building it lacks here and the one step that fixes it, and the install goes on', async () => {
    // No C++ compiler, and pkg-config finds no libsecret: as on a bare machine.
    const emptyPkgConfig = join(root, 'no-pkg-config');
    await mkdir(emptyPkgConfig);
    // No controlling terminal (setsid), as under npm in CI: what it says goes to stderr alone.
    const { stdout, stderr } = await run('setsid', ['--wait', process.execPath, join(root, 'scripts', 'check-native-modules.mjs')], {
      cwd: root,
      env: { PATH: process.env.PATH, CXX: 'false', PKG_CONFIG_LIBDIR: emptyPkgConfig },
    });
    assert.equal(stdout, '');
    const lines = stderr.trim().split('\n');
    assert.equal(lines.length, 2, stderr);
    const install = (packages: string) => (debian ? `sudo apt-get install ${packages}` : 'install ');
    assert.ok(
      lines[0]!.startsWith(
        'persona-mcp-workspace: keytar (logins and secrets in the OS keychain) is not available: it is not installed (npm leaves it out when it cannot build it). ' +
          'Without it logins and secrets go to an encrypted file in the state dir instead. ' +
          `To fix it: ${install('g++ libsecret-1-dev')}`,
      ),
      lines[0],
    );
    assert.ok(lines[0]!.endsWith(`, then run npm install --no-save --omit=dev keytar (in ${root}).`), lines[0]);
    assert.ok(
      lines[1]!.startsWith(
        'persona-mcp-workspace: node-pty (bash with tty: true (a pseudo-terminal)) is not available: it is not installed (npm leaves it out when it cannot build it). ' +
          'Without it bash refuses tty: true; commands without it run as before. ' +
          `To fix it: ${install('g++')}`,
      ),
      lines[1],
    );
    assert.ok(lines[1]!.endsWith(`, then run npm install --no-save --omit=dev node-pty (in ${root}).`), lines[1]);
  });

  it('names each when the server starts and in status, as the server found them', async () => {
    const before = await cli.run(['status']);
    assert.equal(before.code, 0, before.stderr);
    assert.match(
      before.stdout,
      /^No server runs on the state dir .*\nkeytar \(logins .*\) is not available: .*\nnode-pty \(bash .*\) is not available: /,
    );

    const server = await cli.serve();
    try {
      await waitFor(() => /node-pty \(bash/.test(server.stderr()), 10_000, 'the start lines to name node-pty');
      const named = server.stderr();
      // The secret store says where secrets go instead; then each module with its fix.
      assert.match(named, /the OS keychain is unavailable here \(.*keytar.*\)/);
      assert.match(
        named,
        /\nkeytar \(logins and secrets in the OS keychain\) is not available: it is not installed .* To fix it: .*npm install --no-save --omit=dev keytar/,
      );
      assert.match(
        named,
        /\nnode-pty \(bash with tty: true \(a pseudo-terminal\)\) is not available: .* To fix it: .*npm install --no-save --omit=dev node-pty/,
      );

      const status = statusAnswer.parse(JSON.parse((await cli.run(['status', '--json'])).stdout));
      assert.equal(status.nativeModulesCheckedBy, 'server');
      assert.deepEqual(
        status.nativeModules.map((m) => [m.name, m.loaded, m.fix?.endsWith(`npm install --no-save --omit=dev ${m.name} (in ${root})`)]),
        [
          ['keytar', false, true],
          ['node-pty', false, true],
        ],
      );
    } finally {
      await server.stop();
    }
  });

  it('skips the tests of the real keychain and of a terminal, saying why, and the others pass', async () => {
    const tests = [
      ...(await readdir(join(root, BUILD_DIR, 'main', 'secrets')))
        .filter((name) => name.endsWith('.test.js'))
        .map((name) => join('main', 'secrets', name)),
      join('main', 'machine', 'command-runner.test.js'),
      // Those outside main/secrets that keep logins in the keychain.
      join('main', 'connections', 'upstream-oauth', 'oauth-store.test.js'),
      join('main', 'connections', 'upstream-oauth', 'connection-oauth.test.js'),
    ];
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', ...tests.map((test) => join(root, BUILD_DIR, test))], {
      cwd: root,
      env: { PATH: process.env.PATH },
      maxBuffer: 16 * 1024 * 1024,
    });
    assert.match(stdout, /# SKIP keytar cannot be loaded here \(it is not installed .*\): the OS keychain is not tested/);
    assert.match(stdout, /# SKIP node-pty cannot be loaded here \(it is not installed .*\): a command under a terminal is not tested/);
    assert.match(stdout, /\n# fail 0\n/);
    assert.match(stdout, /\n# pass [1-9]/);
    assert.match(stdout, /\n# skipped [1-9]/);
  });
});
