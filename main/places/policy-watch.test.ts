import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandRunner } from '../machine/command-runner.js';
import { PlacePolicy } from '../mcp/place-policy.js';
import { AccessDirectory } from './access-directory.js';
import { placeFromRoot } from './place-root.js';
import { endedByChange, PolicyWatch, type PolicyChange } from './policy-watch.js';

/*
 * The policy watch and the calls that start while a policy changes: whichever comes first, no
 * command runs on under a policy that was replaced, and none is ended for a change it already obeys.
 */
describe('a policy change while a command starts', () => {
  let top: string;
  let access: AccessDirectory;
  let runner: CommandRunner;
  let watch: PolicyWatch;
  let policy: PlacePolicy;
  const seen: PolicyChange[] = [];

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'policy-watch-')));
    await mkdir(join(top, 'ws', 'Crew', 'alpha'), { recursive: true });
    access = new AccessDirectory(join(top, 'state'));
    await access.setPlacePolicy('Crew/alpha', 'machine');
    runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(top, 'outputs') });
    watch = new PolicyWatch(
      access,
      async (changes) => {
        seen.push(...changes);
        await Promise.all(changes.map((change) => runner.stopPlace(change.root, endedByChange(change))));
      },
      () => {},
    );
    await watch.start();
    policy = new PlacePolicy(placeFromRoot('Crew/alpha'), access, {
      workspaceRoot: join(top, 'ws'),
      stateDir: join(top, 'state'),
      skillsDir: join(top, 'skills'),
      env: process.env,
      caughtUp: (dir, root) => watch.caughtUp(dir, root),
    });
  });
  after(async () => {
    watch.stop();
    await runner.killAll();
    await rm(top, { recursive: true, force: true });
  });

  it('ends a command whose policy was replaced after it was read but before the command was registered, with the reason', async () => {
    const { outdated } = await policy.forCommand(); // machine
    // The owner switches to strict, and the watch ends the place's commands before this one is registered.
    await access.setPlacePolicy('Crew/alpha', 'strict');
    await watch.caughtUp(await access.snapshot(), 'Crew/alpha');
    assert.ok(
      seen.some((change) => change.root === 'Crew/alpha'),
      'the watch saw the change',
    );
    const started = Date.now();
    const result = await runner.run({ command: 'sleep 20', timeout: 30 }, { place: 'Crew/alpha', outdated });
    assert.ok(Date.now() - started < 10_000, `ended at once, not after ${Date.now() - started} ms`);
    assert.equal(result.policyChanged, 'the sandbox of Crew alpha changed while it ran (its policy changed from machine to strict)');
    assert.equal(result.exitCode, null);
  });

  it('reads a policy again when it changed between reading it and the watch catching up', async () => {
    await access.setPlacePolicy('Crew/alpha', 'machine');
    const stale = await access.snapshot();
    await access.setPlacePolicy('Crew/alpha', 'strict');
    // Another call makes the watch see strict; whether its own watcher saw machine first is timing.
    await watch.caughtUp(await access.snapshot(), 'Crew/alpha');
    assert.equal(await watch.caughtUp(stale, 'Crew/alpha'), undefined, "a snapshot older than the watch's is not used");
  });

  it('leaves alone a command that started under the new policy before the watch saw the change', async () => {
    await access.setPlacePolicy('Crew/alpha', 'machine');
    await watch.caughtUp(await access.snapshot(), 'Crew/alpha');
    const before = seen.length;
    // No wait for the watch: the call itself makes it catch up first.
    await access.setPlacePolicy('Crew/alpha', 'strict');
    const { sandbox, outdated } = await policy.forCommand();
    assert.ok(sandbox, 'strict: sandboxed');
    assert.ok(seen.length > before, 'the change was seen, and what ran before it ended, before the call went on');
    const result = await runner.run({ command: 'echo ran' }, { place: 'Crew/alpha', sandbox, outdated });
    assert.equal(result.policyChanged, undefined);
    assert.equal(result.exitCode, 0);
  });
});
