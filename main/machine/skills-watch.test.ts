import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import type { InvalidSkill } from './skills.js';
import { SkillsWatch } from './skills-watch.js';

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

  // Proof that the watch has read the folder again since this call: a new folder without a
  // SKILL.md, which it reports as invalid once it sees it. (Waiting a while would also pass if it never looked.)
  let marks = 0;
  const readAgain = async () => {
    const folder = `mark-${(marks += 1)}`;
    await mkdir(join(dir, folder));
    await waitFor(() => invalid.some((skill) => skill.folder === folder), 10_000, 'the watch to read the folder again');
  };

  it('reports invalid skills at start, once each, with the reason', async () => {
    await mkdir(join(dir, 'Bad_Name'));
    await writeFile(join(dir, 'Bad_Name', 'SKILL.md'), '---\nname: Bad_Name\ndescription: x\n---\n');
    await start();
    assert.equal(invalid.length, 1);
    assert.equal(invalid[0]!.folder, 'Bad_Name');
    assert.match(invalid[0]!.reason, /name/);
    await readAgain();
    assert.equal(invalid.filter((skill) => skill.folder === 'Bad_Name').length, 1, 'not reported again while unchanged');
  });

  it('tells when the catalog changes, not before', async () => {
    await start();
    await readAgain();
    assert.equal(changes.length, 0);
    await mkdir(join(dir, 'lint'));
    await writeFile(join(dir, 'lint', 'SKILL.md'), '---\nname: lint\ndescription: Runs the linter.\n---\nbody\n');
    await waitFor(() => changes.length === 1, 10_000, 'the change');
    assert.match(changes[0]!, /lint: Runs the linter\./);
    // The body is not part of the catalog: editing it is no catalog change. Replaced whole (a scan
    // between writeFile's truncate and its write would see a skill without a name, then a new one).
    await writeFile(join(dir, 'lint.md.new'), '---\nname: lint\ndescription: Runs the linter.\n---\nnew body\n');
    await rename(join(dir, 'lint.md.new'), join(dir, 'lint', 'SKILL.md'));
    await readAgain();
    assert.equal(changes.length, 1);
  });

  it('watches a skills folder that does not exist yet', async () => {
    const later = join(dir, 'later');
    await start(later);
    await mkdir(join(later, 'ship'), { recursive: true });
    await writeFile(join(later, 'ship', 'SKILL.md'), '---\nname: ship\ndescription: Ships it.\n---\n');
    await waitFor(() => changes.length === 1, 10_000, 'the new folder to be seen');
    assert.equal(errors.length, 0);
  });
});
