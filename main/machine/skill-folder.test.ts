import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SkillInputError } from './skill-errors.js';
import { skillFolderPath } from './skill-folder.js';

// The one check between a name from the page (or the desktop window's IPC) and a folder on disk.
const skillsDir = join('/srv', 'agents', 'skills');

describe('skillFolderPath', () => {
  it('answers a direct child of the skills folder, naming rule or not', () => {
    assert.equal(skillFolderPath(skillsDir, 'pdf-tools'), join(skillsDir, 'pdf-tools'));
    assert.equal(skillFolderPath(`${skillsDir}/x/..`, 'Upper Case'), join(skillsDir, 'Upper Case'));
  });

  it('refuses any name that reaches elsewhere, or a hidden one', () => {
    for (const name of ['', '.', '..', '../x', 'a/b', 'a\\b', '/etc', '.hidden', 'a\0b', 'x'.repeat(256)]) {
      assert.throws(() => skillFolderPath(skillsDir, name), SkillInputError, JSON.stringify(name));
    }
    assert.throws(() => skillFolderPath(skillsDir, 7 as unknown as string), SkillInputError);
  });
});
