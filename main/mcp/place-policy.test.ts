import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandRunner } from '../machine/command-runner.js';
import type { AuditEntry } from '../audit/audit-log.js';
import { AccessDirectory, type AccessDirectorySnapshot } from '../places/access-directory.js';
import { placeFromRoot } from '../places/place-root.js';
import { auditedRunner } from './audited-runner.js';
import { machineTools } from './machine-tools.js';
import { PlacePolicy } from './place-policy.js';
import type { ToolExtra } from './session-tool.js';

describe('a place policy on a machine without a sandbox', () => {
  let top: string;
  let access: AccessDirectory;
  const extra = { signal: new AbortController().signal, sendNotification: async () => {}, _meta: {} } as unknown as ToolExtra;

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'place-policy-')));
    await mkdir(join(top, 'ws', 'Crew', 'alpha'), { recursive: true });
    await writeFile(join(top, 'ws', 'Crew', 'alpha', 'a.txt'), 'a');
    access = new AccessDirectory(join(top, 'state'));
  });
  after(() => rm(top, { recursive: true, force: true }));

  function tools(env: NodeJS.ProcessEnv) {
    const policy = new PlacePolicy(placeFromRoot('Crew/alpha'), access, {
      workspaceRoot: join(top, 'ws'),
      stateDir: join(top, 'state'),
      skillsDir: join(top, 'skills'),
      env,
    });
    const list = machineTools({
      skillsDir: join(top, 'skills'),
      commands: new CommandRunner({ maxTimeoutSeconds: 10 }),
      policy: () => policy.forCommand(),
    });
    return {
      policy,
      call: (name: string, args: Record<string, unknown>) => list.find((t) => t.definition.name === name)!.call(args, extra),
    };
  }

  it('refuses place and strict calls with the reason, and runs nothing', async () => {
    const { call } = tools({ PATH: '/nonexistent' });
    for (const kind of ['place', 'strict']) {
      await access.setPlacePolicy('Crew/alpha', kind);
      const marker = join(top, `ran-${kind}`);
      for (const [tool, args] of [
        ['bash', { command: `touch ${marker}` }],
        ['read', { path: join(top, 'ws', 'Crew', 'alpha', 'a.txt') }],
      ] as const) {
        const result = await call(tool, args);
        assert.equal(result.isError, true, tool);
        const text = (result.content[0] as { text: string }).text;
        assert.match(
          text,
          new RegExp(
            `^Crew alpha has the ${kind} policy, but bubblewrap \\(bwrap\\) is not installed on this machine: install the bubblewrap package\\. Until then, agents of places with the place or strict policy are refused\\.`,
          ),
        );
        assert.match(text, /The person who runs this app can change it/);
      }
      await assert.rejects(realpath(marker), 'nothing ran unsandboxed');
    }
  });

  it('runs as before under machine', async () => {
    await access.setPlacePolicy('Crew/alpha', 'machine');
    const { policy, call } = tools({ PATH: '/nonexistent' });
    assert.equal(await policy.sandbox(), undefined);
    const result = await call('read', { path: join(top, 'ws', 'Crew', 'alpha', 'a.txt') });
    assert.equal(result.isError, undefined);
  });
});

describe("a call's policy, read once", () => {
  let top: string;
  const records: AuditEntry[] = [];

  /** The owner switches Crew/alpha to strict right after the directory is first read: between a call's audit record and its tool. */
  class SwitchedAfterFirstRead extends AccessDirectory {
    reads = 0;
    override async snapshot(): Promise<AccessDirectorySnapshot> {
      const dir = await super.snapshot();
      if (++this.reads === 1) await this.setPlacePolicy('Crew/alpha', 'strict');
      return dir;
    }
  }

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'call-policy-')));
    await mkdir(join(top, 'ws', 'Crew', 'alpha'), { recursive: true });
    await mkdir(join(top, 'ws', 'Crew', 'beta'), { recursive: true });
    await writeFile(join(top, 'ws', 'Crew', 'beta', 'b.txt'), 'beta');
  });
  after(() => rm(top, { recursive: true, force: true }));

  it('records the policy the tool ran under, and the next call runs under the new one', async () => {
    const access = new SwitchedAfterFirstRead(join(top, 'state'));
    const policy = new PlacePolicy(placeFromRoot('Crew/alpha'), access, {
      workspaceRoot: join(top, 'ws'),
      stateDir: join(top, 'state'),
      skillsDir: join(top, 'skills'),
      env: process.env,
    });
    const read = machineTools({
      skillsDir: join(top, 'skills'),
      commands: new CommandRunner({ maxTimeoutSeconds: 10 }),
      policy: (call) => policy.forCommand(call),
    }).find((t) => t.definition.name === 'read')!;
    const run = auditedRunner((entry) => records.push(entry), {
      caller: 'token:t',
      place: 'Crew/alpha',
      policy: async (call) => (await policy.current(call)).kind,
    });
    // A fresh `extra` per call, as each request has.
    const call = () => {
      const extra = { signal: new AbortController().signal, sendNotification: async () => {}, _meta: {} } as unknown as ToolExtra;
      return run('read', extra, () => read.call({ path: join(top, 'ws', 'Crew', 'beta', 'b.txt') }, extra));
    };

    const first = await call();
    assert.equal(records.at(-1)?.policy, 'machine');
    assert.equal(first.isError, undefined, 'read under machine, as its record says');
    assert.equal(access.reads, 1, 'one read of the directory for the record and the tool');

    const second = await call();
    assert.equal(records.at(-1)?.policy, 'strict');
    assert.equal(second.isError, true, 'strict keeps another place out');
    assert.match(
      (second.content[0] as { text: string }).text,
      /^Refused by the strict policy of Crew alpha: cannot read .* another place's folder/,
    );
  });
});
