import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pathPlan } from './path-plan.js';
import { seatbeltProfile } from './seatbelt-profile.js';

const base = {
  placeLabel: 'Crew alpha',
  workspaceRoot: '/ws',
  placeFolder: '/ws/Crew/alpha',
  tempDir: '/private/tmp',
  appPaths: ['/Users/u/Library/Application Support/persona-mcp-workspace', '/Users/u/"odd"'],
  systemDirs: ['/usr', '/System'],
  skillsDir: '/ws/.agents/skills',
};

/** The profile's rules, one a line, without the fixed preamble. */
const rules = (profile: string) => profile.split('\n').filter((line) => /\(subpath|network/.test(line));

describe('the Seatbelt profile of a plan (macOS; generated, not run here)', () => {
  it('strict: nothing by default, the system read-only, the place writable, other places and the app sealed last, no network', () => {
    const profile = seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'strict', folders: ['/srv/data'] } }) });
    assert.ok(profile.startsWith('(version 1)\n(deny default)\n'));
    const lines = rules(profile);
    const at = (line: string) => {
      const index = lines.indexOf(line);
      assert.ok(index >= 0, `${line} in\n${lines.join('\n')}`);
      return index;
    };
    const root = at('(deny file-read* file-write* (subpath "/"))');
    const usr = at('(allow file-read* (subpath "/usr"))');
    at('(deny file-write* (subpath "/usr"))');
    const crew = at('(deny file-read* file-write* (subpath "/ws/Crew"))');
    const alpha = at('(allow file-read* file-write* (subpath "/ws/Crew/alpha"))');
    at('(allow file-read* file-write* (subpath "/srv/data"))');
    const state = at('(deny file-read* file-write* (subpath "/Users/u/Library/Application Support/persona-mcp-workspace"))');
    at('(deny file-read* file-write* (subpath "/Users/u/\\"odd\\""))');
    assert.ok(root < usr && crew < alpha && alpha < state, 'outer paths first, the app\'s paths last: the last match wins');
    const all = profile.split('\n');
    assert.ok(all.findIndex((line) => line.includes('"/dev/null"')) > all.indexOf('(deny file-read* file-write* (subpath "/"))'), 'the devices after the root\'s rule, which would override them');
    assert.equal(lines.at(-1), '(deny network*)');
    assert.ok(!profile.includes('network-outbound'));
  });

  it('place: reads everywhere, writes the place and temp folder; network only to the proxy\'s loopback port', () => {
    const profile = seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'place', folders: [] } }), proxyPort: 53128 });
    const lines = rules(profile);
    assert.equal(lines[0], '(allow file-read* (subpath "/"))');
    assert.equal(lines[1], '(deny file-write* (subpath "/"))');
    assert.ok(lines.includes('(allow file-read* file-write* (subpath "/private/tmp"))'));
    assert.ok(lines.includes('(deny file-read* file-write* (subpath "/proc"))'));
    assert.deepEqual(lines.slice(-2), ['(deny network*)', '(allow network-outbound (remote ip "localhost:53128"))']);
    assert.throws(() => seatbeltProfile({ plan: pathPlan({ ...base, policy: { kind: 'place', folders: [] } }), proxyPort: 70000 }), /not a port/);
  });
});
