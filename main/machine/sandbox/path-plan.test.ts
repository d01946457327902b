import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bwrapArgs } from './bwrap-args.js';
import { decide, pathPlan, refusalMessage, type PathPlan } from './path-plan.js';

const base = {
  placeLabel: 'Crew alpha',
  workspaceRoot: '/ws',
  placeFolder: '/ws/Crew/alpha',
  tempDirs: ['/tmp', '/var/tmp'],
  appPaths: ['/home/u/.local/state/persona-mcp-workspace', '/home/u/.config/persona-mcp-workspace', '/run/user/1000', '/tmp/dbus-abc'],
  systemDirs: ['/usr', '/etc'],
  skillsDir: '/ws/.agents/skills',
};
const context = {
  outputs: '/tmp/persona-workspace-output-1000/42-0123abcd/place-0123456789abcdef',
  otherPlaceFolders: ['/srv/beta-data', '/srv/data'],
  socketDirs: ['/run'],
  sealedPaths: [{ path: '/home/u/.ssh', why: 'it is sealed by the rule "~/.ssh" (SSH keys)' }],
};
const place = pathPlan({ ...base, ...context, policy: { kind: 'place', folders: ['/srv/data'] } });
const strict = pathPlan({ ...base, ...context, policy: { kind: 'strict', folders: ['/srv/data'] } });
const strictHome = pathPlan({ ...base, ...context, policy: { kind: 'strict', folders: ['/srv/data', '/home/u'] } });

function allowed(plan: PathPlan, path: string, mode: 'read' | 'write'): boolean {
  return decide(plan, path, mode).allowed;
}

describe('the path plan of a place', () => {
  it('place: reads everywhere but the protected paths, writes only in the place, temp and extra folders', () => {
    for (const path of [
      '/etc/hosts',
      '/home/u/notes.txt',
      '/ws/README.md',
      '/ws/Crew/alpha/x',
      '/ws/.agents/skills/a/SKILL.md',
      '/srv/data/y',
    ]) {
      assert.ok(allowed(place, path, 'read'), `read ${path}`);
    }
    for (const path of ['/ws/Crew/alpha', '/ws/Crew/alpha/deep/new.txt', '/srv/data/y'])
      assert.ok(allowed(place, path, 'write'), `write ${path}`);
    for (const path of ['/etc/hosts', '/ws/README.md', '/home/u/notes.txt', '/ws/Crew/alphabet/x', '/ws/.agents/skills/a/SKILL.md']) {
      assert.ok(!allowed(place, path, 'write'), `write ${path}`);
    }
  });

  it("place and strict: a temp folder of their own (not the file tools'), the place's saved outputs readable, read-only", () => {
    for (const plan of [place, strict]) {
      for (const path of [
        '/tmp/scratch',
        '/tmp/tmux-1000/default',
        '/var/tmp/x',
        '/tmp/persona-workspace-output-1000/42-0123abcd/place-fedcba9876543210/x-stdout.log',
      ]) {
        const decision = decide(plan, path, 'read');
        assert.deepEqual(
          decision,
          {
            allowed: false,
            why: `under the ${plan.kind} policy the place's sandbox has a temp folder of its own, which the file tools do not reach`,
          },
          path,
        );
      }
      const own = `${context.outputs}/2026-12-02T10-00-00-000Z-0123abcd-stdout.log`;
      assert.ok(allowed(plan, own, 'read'), `${plan.kind} reads its own outputs`);
      assert.ok(!allowed(plan, own, 'write'), `${plan.kind} never changes them`);
    }
  });

  it("place and strict: the running system's sockets, other places' extra folders and the sealed paths are out of reach, even inside an extra folder", () => {
    for (const plan of [place, strict, strictHome]) {
      assert.deepEqual(decide(plan, '/run/docker.sock', 'read'), {
        allowed: false,
        why: "it holds the running system's sockets, through which a command would act outside the sandbox",
      });
      assert.deepEqual(decide(plan, '/srv/beta-data/x', 'read'), { allowed: false, why: "it is one of another place's extra folders" });
      assert.ok(allowed(plan, '/srv/data/x', 'write'), "a folder both places have stays this one's too");
      assert.deepEqual(decide(plan, '/home/u/.ssh/id_rsa', 'read'), {
        allowed: false,
        why: 'it is sealed by the rule "~/.ssh" (SSH keys)',
      });
    }
    assert.ok(allowed(strictHome, '/home/u/notes.txt', 'write'), 'the home folder is one of its extra folders');
  });

  it("place and strict: the app's state, config, keychain sockets, other places and /proc are out of reach", () => {
    for (const plan of [place, strict]) {
      for (const path of [
        '/home/u/.local/state/persona-mcp-workspace/secrets.key',
        '/home/u/.local/state/persona-mcp-workspace',
        '/home/u/.config/persona-mcp-workspace/settings.json',
        '/run/user/1000/bus',
        '/tmp/dbus-abc',
        '/ws/Crew/beta/notes.txt',
        '/ws/Crew',
        '/ws/Workflow/w/x',
        '/ws/_users/bob/Chats/Work/projects/1/x',
        '/proc/1/environ',
        '/proc/self/environ',
      ]) {
        assert.ok(!allowed(plan, path, 'read'), `${plan.kind} read ${path}`);
        assert.ok(!allowed(plan, path, 'write'), `${plan.kind} write ${path}`);
      }
    }
  });

  it('strict: only the place, the extra folders, the skills and the system folders (read-only)', () => {
    for (const path of ['/usr/bin/env', '/etc/hosts', '/ws/.agents/skills/a/SKILL.md']) {
      assert.ok(allowed(strict, path, 'read'), `read ${path}`);
      assert.ok(!allowed(strict, path, 'write'), `write ${path}`);
    }
    for (const path of ['/ws/Crew/alpha/x', '/srv/data/y']) assert.ok(allowed(strict, path, 'write'), `write ${path}`);
    for (const path of ['/home/u/notes.txt', '/ws/README.md', '/tmp/scratch', '/var/log/syslog'])
      assert.ok(!allowed(strict, path, 'read'), `read ${path}`);
  });

  it("the app's own paths win even inside the place or an extra folder", () => {
    const inside = pathPlan({
      ...base,
      appPaths: ['/ws/Crew/alpha/.state'],
      policy: { kind: 'place', folders: ['/ws/Crew/alpha/.state/sub'] },
    });
    assert.ok(!allowed(inside, '/ws/Crew/alpha/.state/secrets.key', 'read'));
    assert.ok(!allowed(inside, '/ws/Crew/alpha/.state/sub/x', 'write'));
    assert.ok(allowed(inside, '/ws/Crew/alpha/other', 'write'));
  });

  it("This machine under place: the workspace root is its folder, every place's folder is out of reach", () => {
    const machine = pathPlan({ ...base, placeLabel: 'This machine', placeFolder: '/ws', policy: { kind: 'place', folders: [] } });
    assert.ok(allowed(machine, '/ws/README.md', 'write'));
    assert.ok(!allowed(machine, '/ws/Crew/alpha/x', 'read'));
  });

  it('a refusal says which policy refused, why, and who can change it', () => {
    const decision = decide(place, '/ws/Crew/beta/notes.txt', 'read');
    assert.equal(decision.allowed, false);
    const message = refusalMessage(place, '/ws/Crew/beta/notes.txt', 'read', decision.allowed ? '' : decision.why);
    assert.match(
      message,
      /^Refused by the place policy of Crew alpha: cannot read \/ws\/Crew\/beta\/notes\.txt, because it is another place's folder\. /,
    );
    assert.match(message, /The person who runs this app can change it on the Connections page .* "persona-mcp-workspace places policy"/);
    const write = decide(place, '/etc/hosts', 'write');
    assert.deepEqual(write, {
      allowed: false,
      why: 'the place policy writes only in /ws/Crew/alpha, /srv/data and a temp folder of its own',
    });
  });
});

describe('bubblewrap arguments from the plan', () => {
  const kinds = new Map<string, 'dir' | 'file'>([
    ['/tmp', 'dir'],
    ['/ws', 'dir'],
    ['/ws/Crew', 'dir'],
    ['/ws/Crew/alpha', 'dir'],
    ['/ws/.agents/skills', 'dir'],
    ['/usr', 'dir'],
    ['/etc', 'dir'],
    ['/home/u/.local/state/persona-mcp-workspace', 'dir'],
    ['/tmp/dbus-abc', 'file'],
    [context.outputs, 'dir'],
    ['/dev/null', 'file'],
  ]);
  const pairs = (args: string[]): string[] => args.flatMap((arg, i) => (arg.startsWith('--') ? [`${arg} ${args[i + 1] ?? ''}`] : []));

  it("place: the machine read-only, outer mounts first, other places and the app's paths covered, no network", () => {
    const args = bwrapArgs({ plan: place, kinds, cwd: '/ws/Crew/alpha', newSession: true });
    const order = [
      '--ro-bind /',
      '--ro-bind /ws',
      '--tmpfs /tmp',
      '--tmpfs /ws/Crew',
      '--bind /ws/Crew/alpha',
      '--tmpfs /home/u/.local/state/persona-mcp-workspace',
      '--ro-bind /dev/null',
    ];
    const seen = pairs(args);
    const positions = order.map((pair) => seen.indexOf(pair));
    assert.ok(
      positions.every((p) => p >= 0),
      `${order} in ${seen}`,
    );
    assert.deepEqual(
      [...positions].sort((a, b) => a - b),
      positions,
      `in this order: ${seen}`,
    );
    assert.ok(!seen.some((pair) => pair.includes('/srv/data')), 'an extra folder that does not exist is not mounted');
    for (const flag of ['--unshare-pid', '--unshare-net', '--die-with-parent', '--new-session']) assert.ok(args.includes(flag), flag);
    assert.deepEqual(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2), ['--cap-drop', 'ALL']);
    assert.ok(!args.includes('--dev'), 'a /dev of a few nodes, without a devpts (it would need a second user namespace)');
    for (const pair of ['--tmpfs /dev', '--dev-bind /dev/null', '--tmpfs /dev/shm', '--proc /proc']) assert.ok(seen.includes(pair), pair);
    const remounted = args.flatMap((arg, i) => (arg === '--remount-ro' ? [args[i + 1]] : []));
    assert.deepEqual(remounted, ['/ws/Crew', '/home/u/.local/state/persona-mcp-workspace'], 'covering folders read-only, the root not');
    assert.ok(
      seen.indexOf(`--ro-bind ${context.outputs}`) > seen.indexOf('--tmpfs /tmp'),
      'its outputs shown read-only in its private /tmp',
    );
    assert.ok(args.indexOf('--remount-ro') > args.indexOf('/ws/Crew/alpha'), 'after the place is mounted inside');
  });

  it('strict: only the system folders and the place, a private temp folder, the root read-only', () => {
    const args = bwrapArgs({ plan: strict, kinds, cwd: '/ws/Crew/alpha', newSession: false });
    const seen = pairs(args);
    assert.ok(!seen.includes('--ro-bind /'));
    for (const pair of [
      '--ro-bind /usr',
      '--ro-bind /etc',
      '--tmpfs /tmp',
      '--bind /ws/Crew/alpha',
      '--remount-ro /',
      '--chdir /ws/Crew/alpha',
    ])
      assert.ok(seen.includes(pair), pair);
    assert.ok(!args.includes('--new-session'), 'a tty command keeps its terminal');
  });

  it('with network: the runtime the bridge runs with, read-only under strict before the root is made read-only; place shows it already', () => {
    const strictArgs = bwrapArgs({ plan: strict, kinds, cwd: '/ws/Crew/alpha', newSession: true, runtimeDir: '/opt/node/bin' });
    const seen = pairs(strictArgs);
    assert.ok(
      seen.indexOf('--ro-bind /opt/node/bin') >= 0 && seen.indexOf('--ro-bind /opt/node/bin') < seen.indexOf('--remount-ro /'),
      `${seen}`,
    );
    const placeArgs = bwrapArgs({ plan: place, kinds, cwd: '/ws/Crew/alpha', newSession: true, runtimeDir: '/opt/node/bin' });
    assert.ok(!pairs(placeArgs).includes('--ro-bind /opt/node/bin'));
    assert.ok(strictArgs.includes('--unshare-net') && placeArgs.includes('--unshare-net'), 'the network comes through the proxy only');
  });

  it('with a /tmp size: every temp folder of its own is sized, /dev small, the covering folders (read-only) not', () => {
    for (const plan of [place, strict]) {
      const args = bwrapArgs({ plan, kinds, cwd: '/ws/Crew/alpha', newSession: true, tmpMb: 16 });
      const sizeOf = (path: string): string | undefined => {
        const at = args.findIndex((arg, i) => arg === '--tmpfs' && args[i + 1] === path);
        return args[at - 2] === '--size' ? args[at - 1] : undefined;
      };
      for (const path of ['/tmp', '/var/tmp', '/dev/shm']) assert.equal(sizeOf(path), String(16 * 1024 * 1024), `${plan.kind} ${path}`);
      assert.equal(sizeOf('/dev'), String(1024 * 1024));
      assert.equal(sizeOf('/ws/Crew'), undefined, 'an empty read-only folder over another place');
      assert.ok(
        !bwrapArgs({ plan, kinds, cwd: '/ws/Crew/alpha', newSession: true }).includes('--size'),
        "without a size, the kernel's default",
      );
    }
  });
});
