import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pathPlan } from './path-plan.js';
import { seatbeltLaunch } from './seatbelt-launch.js';
import { ancestorsOf, MACH_SERVICES, MACOS_SYSTEM_DIRS, seatbeltProfile } from './seatbelt-profile.js';

const state = '/Users/u/Library/Application Support/persona-mcp-workspace';
const base = {
  placeLabel: 'Crew alpha',
  workspaceRoot: '/ws',
  placeFolder: '/ws/Crew/alpha',
  tempDirs: ['/private/var/folders/ab/xyz/T', '/private/tmp'],
  appPaths: [state, '/Users/u/"odd"'],
  systemDirs: MACOS_SYSTEM_DIRS,
  skillsDir: '/ws/.agents/skills',
};
const privateTemp = `${state}/sandbox-tmp/0123456789abcdef`;

/** The index of `line` in the profile's lines, which must hold it. */
function lineOf(lines: readonly string[], line: string): number {
  const index = lines.indexOf(line);
  assert.ok(index >= 0, `${line} in\n${lines.join('\n')}`);
  return index;
}

describe('the Seatbelt profile of a plan (macOS; its text, on every platform)', () => {
  const strict = seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'strict', folders: ['/srv/data'] } }), privateTemp });
  const lines = strict.split('\n');

  it('strict: nothing by default, the system read-only, the place writable, other places and the app sealed after them (the last match wins)', () => {
    assert.ok(strict.startsWith('(version 1)\n(deny default)\n'));
    const root = lineOf(lines, '(deny file-read* file-write* (subpath "/"))');
    const usr = lineOf(lines, '(allow file-read* (subpath "/usr"))');
    lineOf(lines, '(deny file-write* (subpath "/usr"))');
    for (const dir of ['/System', '/private/etc', '/private/var/db/dyld', '/private/var/select', '/Library/Developer'])
      lineOf(lines, `(allow file-read* (subpath "${dir}"))`);
    const crew = lineOf(lines, '(deny file-read* file-write* (subpath "/ws/Crew"))');
    const alpha = lineOf(lines, '(allow file-read* file-write* (subpath "/ws/Crew/alpha"))');
    lineOf(lines, '(allow file-read* file-write* (subpath "/srv/data"))');
    const sealed = lineOf(lines, `(deny file-read* file-write* (subpath "${state}"))`);
    lineOf(lines, '(deny file-read* file-write* (subpath "/Users/u/\\"odd\\""))');
    assert.ok(root < usr && crew < alpha && alpha < sealed);
    assert.ok(!lines.includes('(allow file-read* (subpath "/Library"))'), 'not all of /Library: the keychains are there');
  });

  it('strict: the system temp folders out of reach, a private one writable inside the sealed state dir', () => {
    lineOf(lines, '(deny file-read* file-write* (subpath "/private/tmp"))');
    lineOf(lines, '(deny file-read* file-write* (subpath "/private/var/folders/ab/xyz/T"))');
    const own = lineOf(lines, `(allow file-read* file-write* (subpath "${privateTemp}"))`);
    assert.ok(own > lineOf(lines, `(deny file-read* file-write* (subpath "${state}"))`), "after the state dir's seal, which it is inside");
  });

  it('devices, the root and the folders on the way to reachable paths: after the rules that would hide them', () => {
    const root = lineOf(lines, '(deny file-read* file-write* (subpath "/"))');
    const dev = lineOf(lines, '(deny file-read* file-write* (subpath "/dev"))');
    const devices = lines.findIndex(
      (line) => line.startsWith('(allow file-read* file-write-data file-ioctl') && line.includes('(literal "/dev/null")'),
    );
    assert.ok(devices > root && devices > dev);
    assert.ok(!lines[devices]!.includes('ttys'), "no other terminal's device: a command could type into it");
    const metadata = lines.find((line) => line.startsWith('(allow file-read-metadata') && line.includes('(literal "/ws")'));
    assert.ok(metadata?.includes('(literal "/ws/Crew")') && metadata.includes(`(literal "${state}/sandbox-tmp")`), metadata);
    assert.ok(lines.indexOf(metadata!) > lineOf(lines, `(deny file-read* file-write* (subpath "${state}"))`));
  });

  it('the folders holding a hidden or sealed path cannot be renamed away from under their rule', () => {
    const pin = lines.find((line) => line.startsWith('(deny file-write-unlink'));
    for (const folder of ['/ws', '/Users', '/Users/u/Library', '/private/var/folders/ab/xyz'])
      assert.ok(pin?.includes(`(literal "${folder}")`), `${folder} in ${pin}`);
    assert.ok(lines.indexOf(pin!) > lineOf(lines, `(allow file-read* file-write* (subpath "${privateTemp}"))`), 'after every allow');
  });

  it("processes, system information and Mach services: its own only, no keychain, no other process's environment", () => {
    lineOf(lines, '(allow signal (target same-sandbox))');
    lineOf(lines, '(allow process-info* (target same-sandbox))');
    assert.ok(!lines.includes('(allow mach-lookup)') && !lines.includes('(allow sysctl-read)'), 'lists, never everything');
    const mach = lines.find((line) => line.startsWith('(allow mach-lookup'));
    assert.equal(mach, `(allow mach-lookup ${MACH_SERVICES.map((name) => `(global-name "${name}")`).join(' ')})`);
    for (const name of MACH_SERVICES) assert.doesNotMatch(name, /secur|secd|keychain|trustd|cfprefs|mDNSResponder|dnssd/i);
    const sysctl = lines.find((line) => line.startsWith('(allow sysctl-read'));
    assert.ok(sysctl?.includes('(sysctl-name "kern.osproductversion")') && sysctl.includes('(sysctl-name-prefix "hw.")'));
    assert.doesNotMatch(sysctl!, /procargs|kern\.proc/);
  });

  it('no hard links nor clones anywhere: one of a sealed file, in a writable folder, would be a path the rules allow', () => {
    for (const profile of [
      strict,
      seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'place', folders: [] } }), proxyPort: 1 }),
    ]) {
      assert.doesNotMatch(profile, /file-link|file-clone/);
      assert.doesNotMatch(profile, /\(allow default\)|\(allow file\*/, 'no wildcard that would take them in');
    }
  });

  it('strict without a list: no network at all', () => {
    assert.equal(lines.filter(Boolean).at(-1), '(deny network*)');
    assert.ok(!strict.includes('network-outbound'));
  });

  it("place: reads everywhere, writes the place, the system's temp folders out of reach; network only to the proxy's loopback port", () => {
    const place = seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'place', folders: [] } }), proxyPort: 53128 }).split('\n');
    const root = lineOf(place, '(allow file-read* (subpath "/"))');
    assert.equal(place[root + 1], '(deny file-write* (subpath "/"))');
    lineOf(place, '(deny file-read* file-write* (subpath "/private/tmp"))');
    lineOf(place, '(deny file-read* file-write* (subpath "/private/var/folders/ab/xyz/T"))');
    assert.deepEqual(place.filter(Boolean).slice(-2), ['(deny network*)', '(allow network-outbound (remote ip "localhost:53128"))']);
    assert.throws(
      () => seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'place', folders: [] } }), proxyPort: 70000 }),
      /not a port/,
    );
  });

  it('the folders above a path', () => {
    assert.deepEqual(ancestorsOf('/a/b/c'), ['/a', '/a/b']);
    assert.deepEqual(ancestorsOf('/a'), []);
  });
});

describe('a command under sandbox-exec (macOS; its argv and environment, on every platform)', () => {
  const plan = pathPlan({ ...base, policy: { kind: 'strict', folders: [] } });

  it("bash -c under the profile, in the place's folder, temp and proxy variables set", () => {
    const launch = seatbeltLaunch({
      plan,
      command: 'echo hi',
      bash: '/bin/bash',
      env: { PATH: '/usr/bin:/bin', TMPDIR: '/private/var/folders/ab/xyz/T/' },
      proxyPort: 40001,
      privateTemp,
    });
    assert.equal(launch.file, '/usr/bin/sandbox-exec');
    assert.deepEqual(launch.args, ['-p', seatbeltProfile({ plan, proxyPort: 40001, privateTemp }), '/bin/bash', '-c', 'echo hi']);
    assert.equal(launch.cwd, '/ws/Crew/alpha');
    assert.equal(launch.env?.TMPDIR, privateTemp);
    assert.equal(launch.env?.TMP, privateTemp);
    assert.equal(launch.env?.HTTPS_PROXY, 'http://127.0.0.1:40001');
    assert.equal(launch.env?.NO_PROXY, '');
    assert.equal(launch.env?.PATH, '/usr/bin:/bin');
  });

  it('without network nor private temp folder: no proxy variables, TMPDIR as given', () => {
    const launch = seatbeltLaunch({ plan, command: 'true', bash: '/bin/bash', env: { TMPDIR: '/private/var/folders/ab/xyz/T/' } });
    assert.equal(launch.env?.TMPDIR, '/private/var/folders/ab/xyz/T/');
    assert.equal(launch.env?.HTTP_PROXY, undefined);
    assert.ok(!launch.args[1]!.includes('network-outbound'));
  });
});
