// A place's sandbox policy, limits, network hosts and tool search from the command line, kept in
// the access directory, and what a running server makes of them.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cliSandbox } from './fixtures/cli-process.js';

describe("a place's settings from the command line", () => {
  const cli = cliSandbox('pw-cli-places-');
  after(() => cli.remove());

  /** Runs `args`, which must be refused as misuse (exit 2) with a message matching `why`. */
  const refused = async (args: string[], why: RegExp) => {
    const answer = await cli.run(args);
    assert.equal(answer.code, 2, answer.stdout);
    assert.match(answer.stderr, why);
  };
  /** What the access directory keeps for Crew/alpha, read from its file. */
  const crewAlpha = async () => JSON.parse(await readFile(join(cli.stateDir, 'access.json'), 'utf8')).places['Crew/alpha'];

  it("shows and sets a place's sandbox policy, which the access directory keeps", async () => {
    const shown = await cli.run(['places', 'policy', 'Crew/alpha']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, 'The policy of Crew alpha is machine.\n');
    const set = await cli.run(['places', 'policy', 'Crew/alpha/runs', 'place', '--folder', 'data', '--folder', '/srv/shared']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(
      set.stdout,
      `The policy of Crew alpha is now place.\n  extra folder: ${join(cli.workDir, 'data')}\n  extra folder: /srv/shared\n  network: any public host\n` +
        "  limits: the machine's defaults (no server runs on this state dir: what this machine enforces is found when one starts)\n",
    );
    assert.deepEqual(await crewAlpha(), { policy: { kind: 'place', folders: [join(cli.workDir, 'data'), '/srv/shared'] } });
    const machine = await cli.run(['places', 'policy', '.', 'strict']);
    assert.match(machine.stdout, /The policy of This machine is now strict/);
    await refused(['places', 'policy', 'Crew/alpha', 'open'], /"open" is not a policy: use machine, place or strict/);
    await cli.run(['places', 'policy', '.', 'machine']);
    await cli.run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets a place's limits; with a server running, what is in effect and what this machine cannot enforce", async () => {
    await refused(
      ['places', 'limits', 'Crew/alpha', 'processes=100'],
      /Crew alpha has the machine policy, whose commands run outside any sandbox: choose the place or strict policy first/,
    );
    await cli.run(['places', 'policy', 'Crew/alpha', 'strict']);
    const set = await cli.run(['places', 'limits', 'Crew/alpha', 'processes=200', 'memory=1G', 'tmp=64M']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(
      set.stdout,
      /^Limits of Crew alpha's sandboxed commands \(strict policy\), now:\n  limits: 200 processes and threads at once, 1024 MiB of memory \(its \/tmp's files count\), a \/tmp of 64 MiB; the others the machine's defaults \(no server runs/,
    );
    assert.deepEqual((await crewAlpha()).policy.limits, {
      processes: 200,
      memoryMb: 1024,
      tmpMb: 64,
    });
    await cli.run(['places', 'limits', 'Crew/alpha', 'memory=default']);
    assert.deepEqual((await crewAlpha()).policy.limits, { processes: 200, tmpMb: 64 }, 'one back to its default, the others kept');
    await refused(['places', 'limits', 'Crew/alpha', 'processes=2'], /The processes limit must be a whole number from 16 to/);

    const server = await cli.serve();
    try {
      const shown = await cli.run(['places', 'policy', 'Crew/alpha']);
      assert.equal(shown.code, 0, shown.stderr);
      const lines = shown.stdout.split('\n').filter((line) => line.startsWith('  limit: '));
      assert.equal(lines.length, 3, shown.stdout);
      assert.match(lines[0]!, /^  limit: 200 processes and threads at once(, not enforced on this machine: .{10,})?$/);
      assert.match(
        lines[1]!,
        /^  limit: \d+ MiB of memory \(its \/tmp's files count\) \(the machine's default\)(, not enforced on this machine: .{10,})?$/,
      );
      assert.match(lines[2]!, /^  limit: a \/tmp of 64 MiB(, not enforced on this machine: .{10,})?$/);
      // This machine (the tests' own) holds them: control groups for processes and memory, a sized tmpfs for /tmp.
      if (!/not enforced/.test(lines[0]!)) assert.match(shown.stdout, /\n  processes and memory held by cgroup v[12]/);
      const reset = await cli.run(['places', 'limits', 'Crew/alpha', 'default']);
      assert.match(reset.stdout, /limit: 4096 processes and threads at once \(the machine's default\)/);
    } finally {
      await server.stop();
    }
    await cli.run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets the hosts a place's sandboxed commands reach, beside its policy", async () => {
    await refused(
      ['places', 'network', 'Crew/alpha', 'example.com'],
      /Crew alpha has the machine policy, whose commands reach every host already: choose the place or strict policy first/,
    );
    await cli.run(['places', 'policy', 'Crew/alpha', 'strict']);
    assert.equal(
      (await cli.run(['places', 'network', 'Crew/alpha'])).stdout,
      'Sandboxed commands of Crew alpha (strict policy) reach: no network.\n',
    );
    const set = await cli.run(['places', 'network', 'Crew/alpha', 'API.github.com', '*.npmjs.org']);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'Sandboxed commands of Crew alpha (strict policy) now reach: only api.github.com, *.npmjs.org.\n');
    assert.deepEqual(await crewAlpha(), {
      policy: { kind: 'strict', network: ['api.github.com', '*.npmjs.org'] },
    });
    assert.match((await cli.run(['places', 'policy', 'Crew/alpha'])).stdout, /network: only api\.github\.com, \*\.npmjs\.org/);
    await refused(['places', 'network', 'Crew/alpha', 'https://example.com/'], /is not a host name: write a name/);
    assert.match((await cli.run(['places', 'network', 'Crew/alpha', 'off'])).stdout, /now reach: no network/);
    await cli.run(['places', 'policy', 'Crew/alpha', 'machine']);
  });

  it("shows and sets tool search per place and per token; a running server follows the token's at its next tools/list", async () => {
    const shown = await cli.run(['places', 'tool-search', 'Crew/alpha']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Tool search in Crew alpha is auto \(on when it has more than 40 tools\)/);
    assert.match((await cli.run(['places', 'tool-search', 'Crew/alpha', 'off'])).stdout, /is now off/);
    assert.equal((await crewAlpha()).toolSearch, 'off');
    await refused(['places', 'tool-search', 'Crew/alpha', 'always'], /must be on, off or auto/);
    await cli.run(['places', 'tool-search', 'Crew/alpha', 'auto']);

    const created = await cli.run(['token', 'create', '--name', 'searcher']);
    const token = created.stdout.trim();
    const id = /Created token ([0-9a-f]{16})/.exec(created.stderr)![1]!;
    const server = await cli.serve();
    try {
      const client = await server.connect(token);
      assert.ok(!(await client.listTools()).tools.some((t) => t.name === 'search_tools'), 'six tools: off by default');
      const on = await cli.run(['token', 'tool-search', id, 'on']);
      assert.equal(on.code, 0, on.stderr);
      assert.match(on.stdout, /is now on: an agent using it always gets search_tools and call_tool/);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'search_tools'));
      assert.match((await cli.run(['token', 'list'])).stdout, /tool search on/);
      await client.close();
    } finally {
      await server.stop();
    }
    assert.match((await cli.run(['token', 'tool-search', id])).stdout, /is on/);
    const unknown = await cli.run(['token', 'tool-search', 'ffffffffffffffff', 'off']);
    assert.equal(unknown.code, 3, 'not found');
    assert.match(unknown.stderr, /No agent token with id ffffffffffffffff/);
  });
});
