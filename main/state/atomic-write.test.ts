import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { removeCrashTemps, writeFileAtomic } from './atomic-write.js';

describe('removeCrashTemps', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'atomic-write-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("deletes the temp files of writers that died, and keeps a live writer's and every other file", async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFileAtomic(join(dir, 'agent-tokens.json'), '{"version":1,"tokens":[]}\n');
    const crashed = `.agent-tokens.json.${dead}-0123456789ab.tmp`;
    const live = `.access.json.${process.pid}-abcdef012345.tmp`;
    for (const name of [crashed, live, 'notes.tmp', '.agent-tokens.json.lock']) await writeFile(join(dir, name), 'x');

    assert.deepEqual(await removeCrashTemps(dir), [crashed]);
    assert.deepEqual(
      (await readdir(dir)).sort(),
      ['.access.json.' + `${process.pid}-abcdef012345.tmp`, '.agent-tokens.json.lock', 'agent-tokens.json', 'notes.tmp'].sort(),
    );
    assert.equal(await readFile(join(dir, 'agent-tokens.json'), 'utf8'), '{"version":1,"tokens":[]}\n');
  });

  it('finds nothing to do in a folder that does not exist yet', async () => {
    assert.deepEqual(await removeCrashTemps(join(dir, 'personal-mcp')), []);
  });
});
