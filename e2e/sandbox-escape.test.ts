import assert from 'node:assert/strict';
import { constants, existsSync, readFileSync } from 'node:fs';
import { access, lstat, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { placeGroupName } from '../main/machine/sandbox/cgroups.js';
import { SavedOutputs } from '../main/machine/saved-outputs.js';
import { AccessDirectory } from '../main/places/access-directory.js';
import { callApi } from '../test/support/control-api.js';
import { waitFor } from '../test/support/host-fixture.js';
import { itRunsTheBattery, sharedAttempts, startEscapeHost, type Attempt, type EscapeHost } from './sandbox-escape-battery.js';

/*
 * The escape battery of issue 16, with real bubblewrap: an agent of Crew/alpha tries to reach the
 * app's secrets, another place, the host's processes, the app's ports and the keychain. Under
 * `place` and `strict` every attempt fails with a clear error; under `machine` the same attempts
 * succeed, which proves each one really reaches its target when nothing stops it.
 */

describe('the sandbox escape battery, as an agent of Crew/alpha', () => {
  let host: EscapeHost;
  let attempts: Attempt[];
  /** This server's control-group folders (the policy's answer says where they are). */
  let groups: string[] = [];
  const placeAnswer = async () =>
    (await callApi(await host.fx.host.open(), await host.fx.host.adminToken(), 'GET', '/mcp/place?workspace_path=Crew/alpha')).json.policy;
  /** The folders of a place's control group, one per hierarchy. */
  const placeGroupFolders = (root: string) => groups.map((dir) => join(dir, placeGroupName(root))).filter((dir) => existsSync(dir));

  before(async () => {
    host = await startEscapeHost('pw-escape-');
    const { ws, state } = host.targets;
    const key = join(state, 'secrets.key');
    const bus = /unix:path=([^,;]+)/.exec(process.env.DBUS_SESSION_BUS_ADDRESS ?? '')?.[1];
    assert.ok(bus, 'the tests run on a private D-Bus with a path socket (scripts/test.sh)');
    const pid = process.pid;
    attempts = [
      ...sharedAttempts(host.targets),
      { name: "the host's /proc/<pid>/environ", bash: `cat /proc/${pid}/environ | tr '\\0' '\\n' | grep -q DBUS_SESSION_BUS_ADDRESS` },
      {
        name: 'the keychain over D-Bus',
        bash: `DBUS_SESSION_BUS_ADDRESS=unix:path=${bus} dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets org.freedesktop.DBus.Peer.Ping`,
      },
      { name: "the keychain's address in the environment", bash: 'test -n "$DBUS_SESSION_BUS_ADDRESS"' },
      { name: 'ptrace the host', bash: `timeout 1 strace -p ${pid} -e trace=none -o /dev/null; test $? -eq 124` },
      { name: "enter the host's namespaces", bash: `nsenter -t ${pid} -m cat ${key}` },
      { name: "read tool: the host's /proc/<pid>/environ", tool: { name: 'read', arguments: { path: `/proc/${pid}/environ` } } },
      {
        name: "edit tool: another place's file",
        tool: {
          name: 'edit',
          arguments: { path: join(ws, 'Crew', 'beta', 'notes.txt'), edits: [{ old_string: 'beta', new_string: 'gamma' }] },
        },
      },
    ];
    // Out of the place's control group, or its limit raised: where the host's groups are writable by this user (as root on cgroup v1).
    if (
      await access('/sys/fs/cgroup/pids/cgroup.procs', constants.W_OK).then(
        () => true,
        () => false,
      )
    ) {
      await host.setPolicy('strict');
      await host.client.callTool({ name: 'bash', arguments: { command: 'true' } }); // the place's group exists from its first command
      groups = (await placeAnswer()).limitsInEffect.enforcedBy?.groups ?? [];
      const max = join(
        placeGroupFolders('Crew/alpha').find((dir) => existsSync(join(dir, 'pids.max')))!,
        'pids.max',
      );
      attempts.push(
        { name: "leave the place's control group", bash: 'echo $$ > /sys/fs/cgroup/pids/cgroup.procs' },
        { name: "write the place's process limit", bash: `v=$(cat ${max}) && echo "$v" > ${max}` },
      );
    }
  });

  after(async () => {
    await host?.close();
    assert.deepEqual(
      groups.filter((dir) => existsSync(dir)),
      [],
      'the control groups of the places are removed when the server stops',
    );
  });

  itRunsTheBattery(() => ({ host, attempts }));

  it('a hard link to the key made before (under machine): the file tools refuse it, bash runs nothing until it is gone', async () => {
    const {
      client,
      targets: { alpha, state },
    } = host;
    const key = join(state, 'secrets.key');
    await host.setPolicy('machine');
    const made = (await client.callTool({
      name: 'bash',
      arguments: { command: `ln ${key} ${alpha}/hard-key && echo made` },
    })) as unknown as { structuredContent: { stdout: string } };
    assert.equal(made.structuredContent.stdout, 'made\n');
    for (const kind of ['place', 'strict'] as const) {
      await host.setPolicy(kind);
      for (const tool of [
        { name: 'read', arguments: { path: join(alpha, 'hard-key') } },
        { name: 'write', arguments: { path: join(alpha, 'hard-key'), content: 'x' } },
        { name: 'edit', arguments: { path: join(alpha, 'hard-key'), edits: [{ old_string: 'a', new_string: 'b' }] } },
      ]) {
        const result = (await client.callTool(tool)) as { isError?: boolean; content: Array<{ text?: string }> };
        assert.equal(result.isError, true, `${kind} ${tool.name}`);
        assert.match(
          result.content[0]!.text ?? '',
          new RegExp(
            `^Refused by the ${kind} policy of Crew alpha: cannot (read|write) .*hard-key, because it is a hard link to one of the app's own files`,
          ),
        );
      }
      const run = (await client.callTool({ name: 'bash', arguments: { command: `cat ${alpha}/hard-key` } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(run.isError, true);
      assert.match(
        run.content[0]!.text ?? '',
        new RegExp(
          `Refused by the ${kind} policy of Crew alpha: no command runs while the app's file .*secrets\\.key has another name \\(a hard link\\) that a command could read; find it with "find / -xdev -samefile .*secrets\\.key" and remove it\\. The person who runs this app can change it`,
        ),
      );
    }
    await rm(join(alpha, 'hard-key'));
    const after = (await client.callTool({ name: 'bash', arguments: { command: 'echo runs' } })) as unknown as {
      structuredContent: { stdout: string };
    };
    assert.equal(after.structuredContent.stdout, 'runs\n', 'once the link is gone');
  });

  it('works inside the place under place and strict: files, commands, a terminal, temp files', async () => {
    const {
      client,
      targets: { alpha, ws },
    } = host;
    for (const kind of ['place', 'strict'] as const) {
      await host.setPolicy(kind);
      const wrote = await client.callTool({ name: 'write', arguments: { path: join(alpha, `${kind}.txt`), content: `${kind}\n` } });
      assert.ok(!wrote.isError, JSON.stringify(wrote));
      const run = (await client.callTool({
        name: 'bash',
        arguments: { command: `pwd; cat ${kind}.txt; echo t > /tmp/pw-escape-tmp-$$ && rm /tmp/pw-escape-tmp-$$ && echo tmp-ok` },
      })) as unknown as { structuredContent: { exitCode: number; stdout: string } };
      assert.equal(run.structuredContent.exitCode, 0, JSON.stringify(run));
      assert.equal(run.structuredContent.stdout, `${alpha}\n${kind}\ntmp-ok\n`);
      const tty = (await client.callTool({
        name: 'bash',
        arguments: { command: `test -t 1 && cat ${alpha}/${kind}.txt; cat ${ws}/Crew/beta/notes.txt`, tty: true },
      })) as unknown as { structuredContent: { exitCode: number; stdout: string } };
      assert.notEqual(tty.structuredContent.exitCode, 0);
      assert.match(tty.structuredContent.stdout, new RegExp(`^${kind}\\r?\\n.*No such file or directory`, 's'));
    }
  });

  it('reads its own saved outputs under place and strict, at the path the answer names, and never changes them', async () => {
    const { client } = host;
    for (const kind of ['place', 'strict'] as const) {
      await host.setPolicy(kind);
      const run = (await client.callTool({ name: 'bash', arguments: { command: `seq 1 20000; echo ${kind}-output` } })) as unknown as {
        structuredContent: { stdoutFullOutputPath?: string };
      };
      const path = run.structuredContent.stdoutFullOutputPath;
      assert.ok(path, JSON.stringify(run).slice(0, 300));
      const read = (await client.callTool({ name: 'read', arguments: { path, offset: -1 } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.ok(!read.isError, JSON.stringify(read));
      assert.equal(read.content[0]!.text, `${kind}-output\n`);
      const tail = (await client.callTool({ name: 'bash', arguments: { command: `tail -1 ${path}` } })) as unknown as {
        structuredContent: { stdout: string };
      };
      assert.equal(tail.structuredContent.stdout, `${kind}-output\n`);
      const write = (await client.callTool({ name: 'write', arguments: { path, content: 'changed' } })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(write.isError, true);
      assert.match(
        write.content[0]!.text ?? '',
        new RegExp(
          `^Refused by the ${kind} policy of Crew alpha: cannot write .*, because it is the place's saved bash outputs, which its agents read but never change`,
        ),
      );
      const overwrite = (await client.callTool({ name: 'bash', arguments: { command: `echo changed > ${path}` } })) as unknown as {
        structuredContent: { exitCode: number };
      };
      assert.notEqual(overwrite.structuredContent.exitCode, 0);
      assert.match(await readFile(path, 'utf8'), new RegExp(`${kind}-output\n$`));
    }
  });

  it('never follows links planted where the sweep of saved outputs looks (1-deadbeef -> the state dir, ...)', async () => {
    const {
      client,
      targets: { state, home },
    } = host;
    const base = new SavedOutputs({ maxTotalBytes: 1024 ** 2 }).base;
    const key = join(state, 'secrets.key');
    const notes = join(home, 'old-notes.txt');
    await writeFile(notes, 'notes\n');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    for (const path of [key, notes]) await utimes(path, twoDaysAgo, twoDaysAgo);
    // pid 1 always runs (its folder is kept, its day-old files swept); 999999 never does (its folder removed whole).
    const links = { '1-deadbeef': state, '1-cafe0000': home, '999999-0badc0de': state };
    try {
      for (const kind of ['place', 'strict', 'machine'] as const) {
        await host.setPolicy(kind);
        const plant = Object.entries(links)
          .map(([name, target]) => `ln -sfn ${target} ${base}/${name}`)
          .join(' && ');
        await client.callTool({ name: 'bash', arguments: { command: `mkdir -p ${base} && ${plant}` } });
        const planted = await lstat(join(base, '1-deadbeef')).then(
          () => true,
          () => false,
        );
        assert.equal(planted, kind === 'machine', `${kind}: planted only in a /tmp of its own`);
        const left = await new SavedOutputs({ maxTotalBytes: 1024 ** 2 }).sweep();
        assert.equal(await readFile(key, 'utf8').then(() => 'there'), 'there', `${kind}: the key is still there`);
        assert.equal(await readFile(notes, 'utf8'), 'notes\n');
        if (kind === 'machine')
          for (const name of Object.keys(links))
            assert.ok(left.includes(`${join(base, name)}: a link (left alone)`), `${name} in ${left.join('\n')}`);
      }
    } finally {
      await Promise.all(Object.keys(links).map((name) => rm(join(base, name), { force: true })));
    }
  });

  it("starts every sandboxed command with only descriptors 0-2, whatever the server holds open (the sandbox's namespaces, another command's terminal)", async () => {
    const {
      client,
      fx,
      targets: { ws },
    } = host;
    // The root place's session (its folder is the workspace's), under a policy the test leaves alone.
    const other = (await fx.connect(await fx.token('another session'))).client;
    // The command's own descriptors, listed without a pipe or a child (bash holds a pipeline's pipe, or /dev/null for
    // a background command, for a moment while the first command starts, which a busy machine lets a listing see);
    // the folder the glob reads through is closed when the test looks at each entry.
    const listing = 'for f in /proc/$$/fd/*; do if [ -e "$f" ]; then printf "%s " "${f##*/}"; fi; done';
    const fds = async () =>
      (
        (await client.callTool({ name: 'bash', arguments: { command: listing } })) as unknown as {
          structuredContent: { stdout: string };
        }
      ).structuredContent.stdout;
    for (const kind of ['place', 'strict', 'machine'] as const) {
      await host.setPolicy(kind);
      // A terminal's descriptor stays open in the server while its command runs (node-pty does not mark it close-on-exec):
      // the command says it runs, and runs until the test is done.
      const running = join(ws, `terminal-${kind}`);
      const terminal = other.callTool({
        name: 'bash',
        arguments: { command: `touch ${running}; while [ -e ${running} ]; do sleep 0.05; done`, tty: true },
      });
      await waitFor(
        () =>
          stat(running).then(
            () => true,
            () => false,
          ),
        20_000,
        "the terminal's command to run",
      );
      const open = await fds();
      await rm(running);
      if (kind === 'machine')
        assert.notEqual(open, '0 1 2 ', "unsandboxed, the terminal's descriptor is inherited: what the sandbox closes");
      else assert.equal(open, '0 1 2 ', kind);
      assert.notEqual(((await terminal) as { isError?: boolean }).isError, true);
    }
  });

  it('a policy change ends what runs under the old one at once: the command, its background processes, with the reason in the answer', async () => {
    const {
      client,
      targets: { alpha },
    } = host;
    for (const [from, to] of [
      ['place', 'strict'],
      ['strict', 'place'],
      ['machine', 'strict'],
    ] as const) {
      await host.setPolicy(from);
      const log = join(alpha, `background-${from}.log`);
      // A background writer that outlives its command, and the command itself, long.
      const running = client.callTool({
        name: 'bash',
        arguments: { command: `(while :; do echo alive >> ${log}; sleep 0.1; done) >/dev/null 2>&1 & sleep 60`, timeout: 120 },
      }) as Promise<{ isError?: boolean; content: Array<{ text?: string }> }>;
      await waitFor(async () => (await stat(log).catch(() => undefined))?.size !== undefined, 20_000, 'the background writer');
      await host.setPolicy(to);
      const changed = Date.now();
      const answer = await running;
      assert.equal(answer.isError, true);
      assert.match(
        answer.content[0]!.text ?? '',
        new RegExp(
          `Stopped: the sandbox of Crew alpha changed while it ran \\(its policy changed from ${from} to ${to}\\); the command and every process it started were stopped\\. Run it again`,
        ),
      );
      // Ended within a second of the change: nothing writes after that.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, changed + 1000 - Date.now())));
      const size = (await stat(log)).size;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal((await stat(log)).size, size, `${from} -> ${to}: the background writer was ended`);
    }
  });

  it("holds a fork bomb, a memory hog and a /tmp filler to the place's limits; the server and another place answer within 1 s during the bomb; nothing is left after", async (t) => {
    const {
      client,
      beta,
      targets: { state },
    } = host;
    const limits = { processes: 64, memoryMb: 256, tmpMb: 16 };
    const access = new AccessDirectory(state);
    const bash = async (c: typeof client, command: string) =>
      (
        (await c.callTool({ name: 'bash', arguments: { command, timeout: 60 } })) as unknown as {
          structuredContent: { exitCode: number | null; stdout: string; stderr: string };
        }
      ).structuredContent;
    try {
      for (const kind of ['place', 'strict'] as const) {
        await host.setPolicy(kind);
        await access.setPlaceLimits('Crew/alpha', limits);
        const inEffect = (await placeAnswer()).limitsInEffect;
        const unenforced = ['processes', 'memoryMb', 'tmpMb'].filter((name) => inEffect[name].unenforced);
        if (unenforced.length)
          return t.skip(`this machine does not enforce ${unenforced.map((name) => `${name} (${inEffect[name].unenforced})`).join(', ')}`);
        groups = inEffect.enforcedBy.groups;
        assert.deepEqual(
          [inEffect.processes, inEffect.memoryMb, inEffect.tmpMb],
          [
            { value: 64, byDefault: false },
            { value: 256, byDefault: false },
            { value: 16, byDefault: false },
          ],
          JSON.stringify(inEffect),
        );
        // A bounded bomb first: if the limit did not hold, the real one below would take the machine down.
        const forks = await bash(
          client,
          `perl -e 'my @k; for (1..200) { my $p = fork(); last unless defined $p; if (!$p) { sleep 20; exit } push @k, $p } print scalar(@k), "\\n"; kill "KILL", @k'`,
        );
        assert.ok(
          Number(forks.stdout) > 10 && Number(forks.stdout) < limits.processes,
          `${kind}: ${forks.stdout} processes started of 200, under the limit ${limits.processes}`,
        );
        for (const dir of ['/tmp', '/var/tmp', '/dev/shm']) {
          const fill = await bash(client, `dd if=/dev/zero of=${dir}/fill bs=1M count=64; s=$?; rm -f ${dir}/fill; exit $s`);
          assert.notEqual(fill.exitCode, 0, `${kind}: ${dir} holds no more than 16 MiB`);
          assert.match(fill.stderr, /No space left on device/);
        }
        const hog = await bash(client, 'head -c 1G /dev/zero | tail > /dev/null; echo "${PIPESTATUS[1]}"');
        assert.equal(hog.stdout, '137\n', `${kind}: a process holding 1 GiB is killed at 256 MiB`);
      }

      await bash(beta, 'echo warm'); // Crew/beta's sandbox is up before the bomb
      const started = await bash(client, ':(){ :|:& };:');
      assert.equal(started.exitCode, 0);
      const current = () =>
        Number(
          readFileSync(
            join(
              placeGroupFolders('Crew/alpha').find((dir) => existsSync(join(dir, 'pids.current')))!,
              'pids.current',
            ),
            'utf8',
          ),
        );
      await waitFor(() => current() >= limits.processes - 4, 20_000, "the bomb to fill the place's limit");
      // The median of a few rounds: this shared test machine has spikes of its own, with or without a bomb.
      const echoes: number[] = [];
      const pings: number[] = [];
      for (let round = 0; round < 5; round++) {
        let t = performance.now();
        assert.equal((await bash(beta, 'echo beta')).stdout, 'beta\n');
        echoes.push(performance.now() - t);
        t = performance.now();
        await beta.ping();
        pings.push(performance.now() - t);
        assert.ok(current() <= limits.processes, `the bomb stays at ${current()} processes`);
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const shown = (values: number[]) => values.map((ms) => ms.toFixed(0)).join(', ');
      assert.ok(
        median(echoes) < 1000 && median(pings) < 1000,
        `during the bomb: another place's bash echo took ${shown(echoes)} ms, /mcp ping ${shown(pings)} ms`,
      );
      // A policy change ends the place's sandbox, and the bomb with it.
      await host.setPolicy('place');
      await waitFor(() => current() === 0, 10_000, 'the bomb to be gone');
    } finally {
      if ((await access.snapshot()).places['Crew/alpha']?.policy) await access.setPlaceLimits('Crew/alpha', {});
    }
  });

  it('records the policy of each call in the audit log', async () => {
    await host.setPolicy('strict');
    await host.client.callTool({ name: 'bash', arguments: { command: 'true' } });
    const { json } = await callApi(await host.fx.host.open(), await host.fx.host.adminToken(), 'GET', '/activity?limit=500');
    const records = json.records as Array<{ tool: string; policy?: string }>;
    assert.equal(records.at(-1)?.policy, 'strict');
    for (const kind of ['machine', 'place', 'strict'])
      assert.ok(
        records.some((r) => r.policy === kind),
        `calls under ${kind}`,
      );
  });
});
