import assert from 'node:assert/strict';
import { closeSync } from 'node:fs';
import { link, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MachineError } from '../errors.js';
import { openSpot } from '../file-target.js';
import { sandboxProblem } from './sandbox-check.js';
import { appPathsOf, machineEnv, PlaceSandbox, realPathOf, sandboxEnv } from './place-sandbox.js';

describe('a place sandbox on a real file system', () => {
  let top: string;
  let ws: string;
  let stateDir: string;
  let sandbox: PlaceSandbox;
  const refused = (mode: 'read' | 'write', why: RegExp) => (error: unknown) =>
    error instanceof MachineError &&
    error.code === 'refused_by_policy' &&
    new RegExp(`^Refused by the place policy of Crew alpha: cannot ${mode} `).test(error.message) &&
    why.test(error.message);

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'place-sandbox-')));
    ws = join(top, 'ws');
    stateDir = join(top, 'state');
    await mkdir(join(ws, 'Crew', 'alpha'), { recursive: true });
    await mkdir(join(ws, 'Crew', 'beta'), { recursive: true });
    await mkdir(stateDir);
    await writeFile(join(stateDir, 'secrets.key'), 'KEY');
    await writeFile(join(ws, 'Crew', 'beta', 'notes.txt'), 'beta');
    await symlink(join(stateDir, 'secrets.key'), join(ws, 'Crew', 'alpha', 'key-link'));
    await symlink(join(stateDir, 'new-file'), join(ws, 'Crew', 'alpha', 'dangling'));
    await symlink(join(ws, 'Crew', 'beta'), join(ws, 'Crew', 'alpha', 'beta-dir'));
    await link(join(stateDir, 'secrets.key'), join(ws, 'Crew', 'alpha', 'hard-key'));
    await writeFile(join(ws, 'Crew', 'alpha', 'own.txt'), 'mine');
    sandbox = PlaceSandbox.open({ kind: 'place', folders: [] }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir,
      skillsDir: join(ws, '.agents', 'skills'),
      env: { PATH: '/usr/bin' },
    });
  });
  after(() => rm(top, { recursive: true, force: true }));

  /** Where the file tools would work on `path` under the sandbox's rules (file-target.ts): its real path. */
  async function checkFile(path: string, mode: 'read' | 'write'): Promise<string> {
    const spot = openSpot(path, { rules: sandbox, action: mode, create: mode === 'write' });
    if (spot.file) closeSync(spot.file.fd);
    spot.close();
    return spot.path;
  }

  it("allows the place's own files, and writes of new ones, at their real path", async () => {
    assert.equal(await checkFile(join(ws, 'Crew', 'alpha', 'own.txt'), 'write'), join(ws, 'Crew', 'alpha', 'own.txt'));
    assert.equal(await checkFile(join(ws, 'Crew', 'alpha', 'new', 'deep.txt'), 'write'), join(ws, 'Crew', 'alpha', 'new', 'deep.txt'));
    await rm(join(ws, 'Crew', 'alpha', 'new'), { recursive: true });
  });

  it("refuses the app's state, directly, through a link, a dangling link, `..`, or a hard link", async () => {
    const appState = /app's own state/;
    await assert.rejects(checkFile(join(stateDir, 'secrets.key'), 'read'), refused('read', appState));
    await assert.rejects(
      checkFile(join(ws, 'Crew', 'alpha', 'key-link'), 'read'),
      refused('read', /key-link \(really .*state\/secrets\.key\).*app's own state/),
    );
    await assert.rejects(checkFile(join(ws, 'Crew', 'alpha', 'dangling'), 'write'), refused('write', appState));
    await assert.rejects(checkFile(join(ws, 'Crew', 'alpha', '..', '..', '..', 'state', 'secrets.key'), 'read'), refused('read', appState));
    await assert.rejects(
      checkFile(join(ws, 'Crew', 'alpha', 'hard-key'), 'read'),
      refused('read', /hard link to one of the app's own files/),
    );
  });

  it("runs no command while one of the app's files has a hard link, and runs again once it is gone", async () => {
    const hard = join(ws, 'Crew', 'alpha', 'hard-key');
    await assert.rejects(
      sandbox.launch('true', false),
      (error: unknown) =>
        error instanceof MachineError &&
        error.code === 'refused_by_policy' &&
        /^Refused by the place policy of Crew alpha: no command runs while the app's file .*\/state\/secrets\.key has another name \(a hard link\)/.test(
          error.message,
        ),
    );
    await assert.rejects(checkFile(hard, 'write'), refused('write', /hard link to one of the app's own files/));
    await rm(hard);
    const again = PlaceSandbox.open({ kind: 'place', folders: [] }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir,
      skillsDir: join(ws, '.agents', 'skills'),
      env: { PATH: '/usr/bin' },
    });
    const launch = await again.launch('true', false);
    assert.equal(launch.file, 'bwrap');
    launch.release?.(); // not run: what it holds (under place, a proxy of its own) is let go

    await link(join(stateDir, 'secrets.key'), hard);
  });

  it("refuses another place's files, through a link too, and writes outside", async () => {
    await assert.rejects(checkFile(join(ws, 'Crew', 'beta', 'notes.txt'), 'read'), refused('read', /another place's folder/));
    await assert.rejects(checkFile(join(ws, 'Crew', 'alpha', 'beta-dir', 'notes.txt'), 'read'), refused('read', /another place's folder/));
    await assert.rejects(checkFile(join(ws, 'top.txt'), 'write'), refused('write', /writes only in/));
    await assert.rejects(checkFile('/proc/self/environ', 'read'), refused('read', /host's processes/));
  });

  it('resolves paths that do not exist yet through their deepest existing folder', async () => {
    assert.equal(realPathOf(join(ws, 'Crew', 'alpha', 'beta-dir', 'x', 'y')), join(ws, 'Crew', 'beta', 'x', 'y'));
    assert.equal(realPathOf('/nonexistent-root-folder/a'), '/nonexistent-root-folder/a');
  });
});

describe('what a sandboxed command is given', () => {
  it("the app's paths include the keychain's ways in", () => {
    const paths = appPathsOf({
      workspaceRoot: '/ws',
      stateDir: '/state',
      skillsDir: '/skills',
      env: {
        XDG_CONFIG_HOME: '/cfg',
        XDG_RUNTIME_DIR: '/run/user/5',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/dbus-x,guid=1;unix:abstract=/tmp/y',
        SSH_AUTH_SOCK: '/tmp/ssh/agent',
      },
    });
    assert.deepEqual(paths, ['/state', '/cfg/persona-mcp-workspace', '/run/dbus', '/run/user/5', '/tmp/dbus-x', '/tmp/ssh/agent']);
  });

  it("the environment under machine: the app's without its secrets and keychain addresses", () => {
    assert.deepEqual(
      machineEnv({
        PATH: '/usr/bin',
        HOME: '/root',
        EDITOR: 'vi',
        WORKSPACE_SECRET_KEY: 'k',
        WORKSPACE_JWT_SECRET: 's',
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/x',
        GNOME_KEYRING_CONTROL: '/k',
        SSH_AUTH_SOCK: '/s',
      }),
      { PATH: '/usr/bin', HOME: '/root', EDITOR: 'vi' },
    );
  });

  it('the environment of a sandboxed command: only harmless variables, never a credential the app was started with', () => {
    assert.deepEqual(
      sandboxEnv({
        PATH: '/usr/bin',
        HOME: '/home/me',
        LANG: 'C.UTF-8',
        LC_TIME: 'en_GB.UTF-8',
        TERM: 'xterm',
        JAVA_HOME: '/opt/jdk',
        AWS_SECRET_ACCESS_KEY: 'a',
        AWS_ACCESS_KEY_ID: 'b',
        GITHUB_TOKEN: 'c',
        OPENAI_API_KEY: 'd',
        NPM_TOKEN: 'e',
        VAULT_TOKEN: 'f',
        DATABASE_URL: 'postgres://u:p@h/db',
        WORKSPACE_SECRET_KEY: 'k',
        SSH_AUTH_SOCK: '/s',
        LD_PRELOAD: '/x.so',
      }),
      { PATH: '/usr/bin', HOME: '/home/me', LANG: 'C.UTF-8', LC_TIME: 'en_GB.UTF-8', TERM: 'xterm', JAVA_HOME: '/opt/jdk' },
    );
  });

  it('no sandbox where bubblewrap is missing or the OS has none, with the reason', async () => {
    assert.match(
      (await sandboxProblem({ PATH: '/nonexistent' })) ?? '',
      /bubblewrap \(bwrap\) is not installed on this machine: install the bubblewrap package/,
    );
    assert.match((await sandboxProblem({}, 'win32')) ?? '', /This machine \(win32\) has no command sandbox in this app: only Linux/);
    assert.equal(await sandboxProblem(), undefined, "the platform's sandbox works on this test machine");
  });
});
