import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createSkill, deleteSkill, readSkillDetail, saveSkillFile } from './skill-editing.js';
import { SkillConflictError, SkillExistsError, SkillInputError, SkillNotFoundError } from './skill-errors.js';
import { listSkills, loadSkill } from './skills.js';

let root: string;
let skillsDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'skill-editing-'));
  skillsDir = join(root, 'skills');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const valid = (name: string, body = '# Steps\n\nDo it.\n') => `---\nname: ${name}\ndescription: Does ${name}.\n---\n${body}`;

async function put(path: string, content: string): Promise<void> {
  await mkdir(join(skillsDir, path, '..'), { recursive: true });
  await writeFile(join(skillsDir, path), content);
}

describe('createSkill', () => {
  it('makes a valid skill from the template, creating the skills folder', async () => {
    const detail = await createSkill(skillsDir, { name: 'pdf-tools', description: ' Fill PDF forms: "quoted", with #hash. ' });
    assert.equal(detail.name, 'pdf-tools');
    assert.equal(detail.dir, join(skillsDir, 'pdf-tools'));
    assert.deepEqual(detail.files, []);
    assert.equal(detail.content, await readFile(join(skillsDir, 'pdf-tools', 'SKILL.md'), 'utf8'));
    const loaded = await loadSkill(skillsDir, 'pdf-tools');
    assert.equal(loaded.description, 'Fill PDF forms: "quoted", with #hash.', 'the description survives YAML');
    assert.match(loaded.instructions, /^# Pdf tools\n/);
    assert.match(loaded.instructions, /## Steps/);
    assert.deepEqual((await listSkills(skillsDir)).invalid, []);
  });

  it('refuses a name that breaks the naming rule, with the rule, and creates nothing', async () => {
    for (const name of ['Upper', 'two--hyphens', '-lead', 'trail-', 'a_b', '../up', 'a'.repeat(65), '']) {
      await assert.rejects(
        createSkill(skillsDir, { name, description: 'x' }),
        (error: Error) => error instanceof SkillInputError && /lowercase letters, digits and single hyphens/.test(error.message),
        name,
      );
    }
    await assert.rejects(readdir(skillsDir), { code: 'ENOENT' });
  });

  it('refuses an empty or too long description', async () => {
    await assert.rejects(
      createSkill(skillsDir, { name: 'a', description: '   ' }),
      (e: Error) => e instanceof SkillInputError && /Describe what the skill does/.test(e.message),
    );
    await assert.rejects(
      createSkill(skillsDir, { name: 'a', description: 'd'.repeat(1025) }),
      (e: Error) => e instanceof SkillInputError && /1025 characters long; shorten it to 1024/.test(e.message),
    );
    await assert.rejects(readdir(skillsDir), { code: 'ENOENT' });
  });

  it('refuses a name that is taken, leaving that skill as it was', async () => {
    await put('deploy/SKILL.md', valid('deploy'));
    await assert.rejects(
      createSkill(skillsDir, { name: 'deploy', description: 'Other.' }),
      (e: Error) => e instanceof SkillExistsError && /already exists/.test(e.message),
    );
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), valid('deploy'));
    await writeFile(join(skillsDir, 'notes'), 'a file, not a folder');
    await assert.rejects(createSkill(skillsDir, { name: 'notes', description: 'x' }), SkillExistsError);
  });
});

describe('readSkillDetail', () => {
  it('gives SKILL.md as written and the bundled files, for an invalid skill too', async () => {
    await put('broken/SKILL.md', '---\nname: other\n---\n');
    await put('broken/scripts/run.sh', 'echo\n');
    await put('broken/.hidden', 'x');
    const { version, ...detail } = await readSkillDetail(skillsDir, 'broken');
    assert.deepEqual(detail, {
      name: 'broken',
      dir: join(skillsDir, 'broken'),
      content: '---\nname: other\n---\n',
      files: ['scripts/run.sh'],
      unlistedFiles: 0,
    });
    assert.match(version, /^[\w-]{43}$/);
  });

  it('answers null content for a folder without SKILL.md', async () => {
    await mkdir(join(skillsDir, 'empty'), { recursive: true });
    assert.equal((await readSkillDetail(skillsDir, 'empty')).content, null);
  });

  it('says a missing skill, or a file in its place, is not there', async () => {
    await put('file-not-folder', 'x');
    for (const name of ['nope', 'file-not-folder']) {
      await assert.rejects(
        readSkillDetail(skillsDir, name),
        (e: Error) => e instanceof SkillNotFoundError && /There is no skill named/.test(e.message),
        name,
      );
    }
    await assert.rejects(readSkillDetail(skillsDir, '../skills'), SkillInputError);
  });
});

describe('saveSkillFile', () => {
  it('replaces SKILL.md atomically, keeping its mode', async () => {
    await put('deploy/SKILL.md', valid('deploy'));
    await chmod(join(skillsDir, 'deploy', 'SKILL.md'), 0o640);
    const next = valid('deploy', '# New steps\n');
    const detail = await saveSkillFile(skillsDir, 'deploy', next);
    assert.equal(detail.content, next);
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), next);
    assert.equal((await stat(join(skillsDir, 'deploy', 'SKILL.md'))).mode & 0o777, 0o640);
    assert.deepEqual(await readdir(join(skillsDir, 'deploy')), ['SKILL.md'], 'no temp file left behind');
  });

  it('fixes an invalid skill, or gives one its missing SKILL.md', async () => {
    await put('fix-me/SKILL.md', 'no frontmatter\n');
    await mkdir(join(skillsDir, 'bare'));
    await saveSkillFile(skillsDir, 'fix-me', valid('fix-me'));
    await saveSkillFile(skillsDir, 'bare', valid('bare'));
    assert.deepEqual(
      (await listSkills(skillsDir)).skills.map((s) => s.name),
      ['bare', 'fix-me'],
    );
  });

  it('refuses frontmatter that breaks the rules, with the reason, and leaves the file unchanged', async () => {
    await put('deploy/SKILL.md', valid('deploy'));
    const cases: Array<[string, RegExp]> = [
      ['# no frontmatter\n', /must start with YAML frontmatter/],
      ['---\nname: deploy\n---\n', /no "description"/],
      ['---\nname: other\ndescription: x\n---\n', /does not match its folder "deploy"/],
      ['---\nname: deploy\ndescription: [unclosed\n---\n', /not valid YAML/],
    ];
    for (const [content, reason] of cases) {
      await assert.rejects(
        saveSkillFile(skillsDir, 'deploy', content),
        (e: Error) => e instanceof SkillInputError && /^SKILL\.md was not saved: /.test(e.message) && reason.test(e.message),
        content,
      );
    }
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), valid('deploy'));
  });

  it('refuses to overwrite a change made on disk since the person opened SKILL.md, keeping that change', async () => {
    await put('deploy/SKILL.md', valid('deploy'));
    const opened = await readSkillDetail(skillsDir, 'deploy');
    const theirs = valid('deploy', '# Changed by an agent meanwhile\n');
    await put('deploy/SKILL.md', theirs);
    await assert.rejects(
      saveSkillFile(skillsDir, 'deploy', valid('deploy', '# Mine\n'), opened.version),
      (e: Error) =>
        e instanceof SkillConflictError && /changed on disk after you opened it.*Copy your text, reload the skill/.test(e.message),
    );
    assert.equal(await readFile(join(skillsDir, 'deploy', 'SKILL.md'), 'utf8'), theirs);
    // Opened again, it saves; the answer's version is the new content's.
    const reopened = await readSkillDetail(skillsDir, 'deploy');
    const saved = await saveSkillFile(skillsDir, 'deploy', valid('deploy', '# Mine\n'), reopened.version);
    assert.notEqual(saved.version, reopened.version);
    assert.equal(saved.version, (await readSkillDetail(skillsDir, 'deploy')).version);
    // A SKILL.md written by someone else into a folder that had none is a change too.
    await mkdir(join(skillsDir, 'bare'));
    const empty = await readSkillDetail(skillsDir, 'bare');
    await put('bare/SKILL.md', valid('bare'));
    await assert.rejects(saveSkillFile(skillsDir, 'bare', valid('bare', '# Mine\n'), empty.version), SkillConflictError);
  });

  it('refuses a missing skill or a name outside the skills folder, writing nothing', async () => {
    await mkdir(skillsDir, { recursive: true });
    await assert.rejects(saveSkillFile(skillsDir, 'ghost', valid('ghost')), SkillNotFoundError);
    await assert.rejects(saveSkillFile(skillsDir, '..', valid('x')), SkillInputError);
    assert.deepEqual(await readdir(skillsDir), []);
    assert.deepEqual((await readdir(root)).sort(), ['skills']);
  });
});

describe('deleteSkill', () => {
  it('deletes the folder with everything in it', async () => {
    await put('deploy/SKILL.md', valid('deploy'));
    await put('deploy/scripts/run.sh', 'echo\n');
    await put('keep/SKILL.md', valid('keep'));
    await deleteSkill(skillsDir, 'deploy');
    assert.deepEqual(await readdir(skillsDir), ['keep']);
  });

  it('never follows a link out of the skills folder', async () => {
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'precious.txt'), 'keep me');
    // A linked skill: the link goes, its target stays.
    await mkdir(skillsDir);
    await symlink(outside, join(skillsDir, 'linked'), 'dir');
    await deleteSkill(skillsDir, 'linked');
    assert.deepEqual(await readdir(skillsDir), []);
    assert.equal(await readFile(join(outside, 'precious.txt'), 'utf8'), 'keep me');
    // A link inside a skill folder: removed as a link, not followed.
    await put('deploy/SKILL.md', valid('deploy'));
    await symlink(outside, join(skillsDir, 'deploy', 'data'), 'dir');
    await deleteSkill(skillsDir, 'deploy');
    assert.equal(await readFile(join(outside, 'precious.txt'), 'utf8'), 'keep me');
  });

  it('refuses a missing skill and any name that reaches elsewhere, deleting nothing', async () => {
    await put('keep/SKILL.md', valid('keep'));
    await assert.rejects(deleteSkill(skillsDir, 'nope'), SkillNotFoundError);
    for (const name of ['..', '../skills', 'keep/..', '.', `${root}`])
      await assert.rejects(deleteSkill(skillsDir, name), SkillInputError, name);
    assert.deepEqual(await readdir(skillsDir), ['keep']);
    assert.ok((await stat(root)).isDirectory());
  });
});
