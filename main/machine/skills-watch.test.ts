import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { InvalidSkill } from './skills.js';
import { SkillsWatch } from './skills-watch.js';

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('SkillsWatch', () => {
  let dir: string;
  let watch: SkillsWatch | undefined;
  const changes: string[] = [];
  const invalid: InvalidSkill[] = [];
  const errors: Error[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'skills-watch-'));
    changes.length = 0;
    invalid.length = 0;
    errors.length = 0;
  });
  afterEach(async () => {
    await watch?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const start = async (skillsDir = dir) => {
    watch = new SkillsWatch(skillsDir, {
      intervalMs: 20,
      onChange: (text) => changes.push(text),
      onInvalid: (skill) => invalid.push(skill),
      onError: (error) => errors.push(error),
    });
    await watch.start();
  };

  it('reports invalid skills at start, once each, with the reason', async () => {
    await mkdir(join(dir, 'Bad_Name'));
    await writeFile(join(dir, 'Bad_Name', 'SKILL.md'), '---\nname: Bad_Name\ndescription: x\n---\n');
    await start();
    assert.equal(invalid.length, 1);
    assert.equal(invalid[0]!.folder, 'Bad_Name');
    assert.match(invalid[0]!.reason, /name/);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(invalid.length, 1, 'not reported again while unchanged');
  });

  it('tells when the catalog changes, not before', async () => {
    await start();
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(changes.length, 0);
    await mkdir(join(dir, 'lint'));
    await writeFile(join(dir, 'lint', 'SKILL.md'), '---\nname: lint\ndescription: Runs the linter.\n---\nbody\n');
    await until(() => changes.length === 1, 'the change');
    assert.match(changes[0]!, /lint: Runs the linter\./);
    // The body is not part of the catalog: editing it is no catalog change.
    await writeFile(join(dir, 'lint', 'SKILL.md'), '---\nname: lint\ndescription: Runs the linter.\n---\nnew body\n');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(changes.length, 1);
  });

  it('watches a skills folder that does not exist yet', async () => {
    const later = join(dir, 'later');
    await start(later);
    await mkdir(join(later, 'ship'), { recursive: true });
    await writeFile(join(later, 'ship', 'SKILL.md'), '---\nname: ship\ndescription: Ships it.\n---\n');
    await until(() => changes.length === 1, 'the new folder to be seen');
    assert.equal(errors.length, 0);
  });
});
