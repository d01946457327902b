import assert from 'node:assert/strict';
import { once } from 'node:events';
import { chmod, link, mkdir, mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PlaceSandbox } from './place-sandbox.js';
import { enforcerFor, sandboxProblem } from './sandbox-check.js';
import { seatbeltCheckProfile, seatbeltProblem } from './seatbelt-check.js';
import { pathPlan } from './path-plan.js';
import { privateTempOf, sandboxBash } from './seatbelt-launch.js';
import { MACOS_SYSTEM_DIRS } from './seatbelt-profile.js';

/*
 * The macOS side of PlaceSandbox as far as any platform can check it: which sandbox the platform
 * gets, what a call launches (sandbox-exec's argv, environment, folder), strict's private temp
 * folder, the per-call proxy on a loopback port. Whether Seatbelt enforces the profile is
 * e2e/sandbox-escape-macos.test.ts's part, on a Mac.
 */
describe('the Seatbelt path of a place sandbox (platform darwin, run on any)', () => {
  let top: string;
  let ws: string;
  let state: string;
  let alpha: string;
  let service: Server;
  let servicePort: number;

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'seatbelt-launch-')));
    ws = join(top, 'ws');
    state = join(top, 'state');
    alpha = join(ws, 'Crew', 'alpha');
    await mkdir(alpha, { recursive: true });
    await mkdir(state);
    service = createServer((req, res) => res.end(`service ${req.url}`));
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    servicePort = (service.address() as AddressInfo).port;
  });
  after(async () => {
    service.close();
    await rm(top, { recursive: true, force: true });
  });

  const open = (kind: 'place' | 'strict', network: string[] = []) =>
    PlaceSandbox.open({ kind, folders: [], ...(network.length && { network }) }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir: state,
      skillsDir: join(ws, '.agents', 'skills'),
      env: { PATH: '/usr/bin:/bin', WORKSPACE_SECRET_KEY: 'never inside', SSH_AUTH_SOCK: '/tmp/agent' },
      appPorts: () => [],
      platform: 'darwin',
    });

  it('the platform picks the sandbox in one place: bubblewrap on Linux, Seatbelt on macOS, none on Windows (refused with the reason)', async () => {
    assert.equal(enforcerFor('linux'), 'bubblewrap');
    assert.equal(enforcerFor('darwin'), 'seatbelt');
    assert.equal(enforcerFor('win32'), undefined);
    assert.match(
      (await sandboxProblem({}, 'win32')) ?? '',
      /^This machine \(win32\) has no command sandbox in this app: only Linux \(bubblewrap\) and macOS \(Seatbelt\) are supported\.$/,
    );
  });

  it('strict: sandbox-exec with the macOS system folders and the keychain sealed, in the place, with a private temp folder and no network', async () => {
    const launch = await open('strict').launch('echo hi', false);
    const temp = privateTempOf(state, alpha);
    assert.equal(launch.file, '/usr/bin/sandbox-exec');
    assert.deepEqual([launch.args[0], ...launch.args.slice(3)], ['-p', '-c', 'echo hi']);
    assert.match(launch.args[2]!, /^\/(usr\/)?bin\/bash$/, 'bash from PATH (/usr/bin:/bin), by absolute path');
    const profile = launch.args[1]!;
    assert.match(profile, /\(allow file-read\* \(subpath "\/System"\)\)/);
    assert.ok(
      profile.includes(`(deny file-read* file-write* (subpath "${join(homedir(), 'Library', 'Keychains')}"))`),
      'the keychain files sealed',
    );
    assert.ok(profile.includes(`(deny file-read* file-write* (subpath "${state}"))`));
    assert.ok(profile.includes(`(allow file-read* file-write* (subpath "${temp}"))`));
    assert.ok(!profile.includes('network-outbound'));
    assert.equal(launch.cwd, alpha);
    assert.deepEqual(
      {
        TMPDIR: launch.env?.TMPDIR,
        secret: launch.env?.WORKSPACE_SECRET_KEY,
        agent: launch.env?.SSH_AUTH_SOCK,
        proxy: launch.env?.HTTP_PROXY,
      },
      { TMPDIR: temp, secret: undefined, agent: undefined, proxy: undefined },
    );
    assert.equal((await stat(temp)).mode & 0o777, 0o700, "made, for the app's user only");
    assert.equal(launch.release, undefined);
  });

  it("a hard link in the private temp folder is the place's own file, not the app's: commands still run", async () => {
    await writeFile(join(alpha, 'own.txt'), 'mine');
    await link(join(alpha, 'own.txt'), join(privateTempOf(state, alpha), 'own-link'));
    const launch = await open('strict').launch('true', false);
    assert.equal(launch.file, '/usr/bin/sandbox-exec');
  });

  it("with network: a proxy of the call's own on a loopback port, the only one the profile reaches, closed when the call ends", async () => {
    const first = await open('strict', ['localhost']).launch('true', false);
    const second = await open('strict', ['localhost']).launch('true', false);
    const port = Number(new URL(first.env!.HTTP_PROXY!).port);
    const other = Number(new URL(second.env!.HTTP_PROXY!).port);
    assert.equal(first.env?.HTTPS_PROXY, `http://127.0.0.1:${port}`);
    assert.ok(first.args[1]!.endsWith(`(deny network*)\n(allow network-outbound (remote ip "localhost:${port}"))\n`));
    assert.deepEqual(await viaProxy(port, `http://localhost:${servicePort}/x`), { status: 200, body: `service /x` });
    const refused = await viaProxy(port, `http://localhost:${other}/`);
    assert.equal(refused.status, 403, "another sandbox's proxy is one of the app's ports: never a way to its rules");
    assert.match(refused.body, /Refused by the strict policy of Crew alpha/);
    first.release?.();
    second.release?.();
    await assert.rejects(waitClosed(port), /ECONNREFUSED/);
  });

  it("bash by absolute path: the first on PATH in a folder the plan reads, else the system's", async () => {
    const plan = pathPlan({
      policy: { kind: 'strict', folders: [] },
      placeLabel: 'Crew alpha',
      workspaceRoot: ws,
      placeFolder: alpha,
      tempDirs: [top],
      appPaths: [state],
      systemDirs: MACOS_SYSTEM_DIRS,
      skillsDir: join(ws, '.agents', 'skills'),
    });
    const hidden = join(ws, 'Crew', 'beta', 'bin');
    const own = join(alpha, 'bin');
    for (const dir of [hidden, own]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'bash'), '#!/bin/sh\n');
      await chmod(join(dir, 'bash'), 0o755);
    }
    assert.equal(sandboxBash(plan, `relative/bin:${hidden}:${own}:/usr/bin`), join(own, 'bash'));
    assert.equal(sandboxBash(plan, `${hidden}:${join(top, 'nothing')}`), '/bin/bash');
    assert.equal(sandboxBash(plan, undefined), '/bin/bash');
  });

  it("place: a private temp folder as under strict, the system's out of reach; bash runs the start script first", async () => {
    const launch = await open('place').launch('true', false);
    const profile = launch.args[1]!;
    assert.ok(profile.includes('(deny file-read* file-write* (subpath "/private/tmp"))'), profile);
    const temp = privateTempOf(state, alpha);
    assert.equal(launch.env?.TMPDIR, temp);
    assert.ok(profile.includes(`(allow file-read* file-write* (subpath "${temp}"))`));
    assert.equal(launch.env?.BASH_ENV, join(state, 'sandbox', 'start.sh'));
    assert.ok(profile.includes(`(allow file-read* (literal "${join(state, 'sandbox', 'start.sh')}"))`));
    launch.release?.();
  });
});

describe('whether this Mac can run the Seatbelt sandbox (sandbox-exec tried once)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'seatbelt-check-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** A stand-in for sandbox-exec: runs a profile that allows everything, refuses the real shape. */
  async function fake(name: string, script: string): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${script}\n`);
    await chmod(path, 0o755);
    return path;
  }

  it('missing: refused with the reason', async () => {
    assert.equal(
      await seatbeltProblem(join(dir, 'none')),
      `macOS's sandbox (${join(dir, 'none')}) does not run here: ${join(dir, 'none')} is not on this machine.`,
    );
  });

  it('taking the plain profile but not the real one: refused with what sandbox-exec said', async () => {
    const program = await fake(
      'refuses-shape',
      'case "$2" in *"deny default"*) echo "sandbox-exec: unbound variable: file-link" >&2; exit 65;; esac; [ "$3" = /usr/bin/true ]',
    );
    assert.equal(
      await seatbeltProblem(program),
      `macOS's sandbox (${program}) refuses this app's sandbox profile, or a program cannot start under it: sandbox-exec: unbound variable: file-link.`,
    );
  });

  it('running both: no problem; the real shape is a strict profile with every kind of rule', async () => {
    assert.equal(await seatbeltProblem(await fake('runs', '[ "$1" = -p ] && [ "$3" = /usr/bin/true ]')), undefined);
    const profile = seatbeltCheckProfile();
    for (const part of [
      '(deny default)',
      '(subpath "/System")',
      'sandbox-tmp/check',
      '(deny file-write-unlink',
      '(remote ip "localhost:9")',
    ])
      assert.ok(profile.includes(part), part);
  });
});

function viaProxy(port: number, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: url, agent: false, headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Rejects with ECONNREFUSED once nothing listens at the port (the proxy closes in the background). */
async function waitClosed(port: number): Promise<never> {
  for (let i = 0; i < 100; i++) {
    // A connection cut while the proxy closes is not yet the answer.
    await viaProxy(port, 'http://localhost:1/').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') throw error;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('still listening');
}
