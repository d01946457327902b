import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MachineError } from './errors.js';
import { SKILL_MAX_LISTED_FILES, listSkills, loadSkill, skillCatalogText } from './skills.js';

let root: string;
let skillsDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'machine-skills-'));
  skillsDir = join(root, '.agents', 'skills');
  await mkdir(skillsDir, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, content: string): Promise<void> {
  await mkdir(dirname(join(skillsDir, path)), { recursive: true });
  await writeFile(join(skillsDir, path), content);
}

function skillMd(frontmatter: string, body = '# Steps\n\nDo the thing.\n'): string {
  return `---\n${frontmatter}\n---\n${body}`;
}

describe('listSkills', () => {
  it('lists valid skills with their frontmatter, sorted by name', async () => {
    await put(
      'pdf-tools/SKILL.md',
      skillMd(
        [
          'name: pdf-tools',
          'description: Fill and merge PDF forms.',
          'license: MIT',
          'compatibility: Needs poppler-utils',
          'metadata:',
          '  author: someone',
          '  version: 2',
          'allowed-tools: Bash(pdftotext:*) Read',
        ].join('\n'),
      ),
    );
    await put('a-first/SKILL.md', skillMd('name: a-first\ndescription: First.'));
    const { skills, invalid } = await listSkills(skillsDir);
    assert.deepEqual(invalid, []);
    assert.deepEqual(
      skills.map((skill) => skill.name),
      ['a-first', 'pdf-tools'],
    );
    assert.deepEqual(skills[1], {
      name: 'pdf-tools',
      description: 'Fill and merge PDF forms.',
      license: 'MIT',
      compatibility: 'Needs poppler-utils',
      metadata: { author: 'someone', version: '2' },
      allowedTools: 'Bash(pdftotext:*) Read',
      dir: join(skillsDir, 'pdf-tools'),
    });
  });

  it('skips skills that break the Agent Skills spec and says why', async () => {
    const cases: Record<string, [string, RegExp]> = {
      'wrong-folder': [skillMd('name: other-name\ndescription: x'), /name "other-name" does not match its folder "wrong-folder"/],
      Upper: [skillMd('name: Upper\ndescription: x'), /name "Upper" is invalid: use 1-64 lowercase letters/],
      'double--hyphen': [skillMd('name: double--hyphen\ndescription: x'), /is invalid/],
      '-leading': [skillMd('name: -leading\ndescription: x'), /is invalid/],
      [`${'a'.repeat(65)}`]: [skillMd(`name: ${'a'.repeat(65)}\ndescription: x`), /is invalid/],
      'no-description': [skillMd('name: no-description'), /no "description"/],
      'long-description': [
        skillMd(`name: long-description\ndescription: ${'d'.repeat(1025)}`),
        /description is 1025 characters long; the limit is 1024/,
      ],
      'no-frontmatter': ['# Just markdown\n', /must start with YAML frontmatter/],
      'bad-yaml': [skillMd('name: bad-yaml\ndescription: [unclosed'), /not valid YAML/],
      'long-compat': [skillMd(`name: long-compat\ndescription: x\ncompatibility: ${'c'.repeat(501)}`), /compatibility/],
    };
    for (const [folder, [content]] of Object.entries(cases)) await put(`${folder}/SKILL.md`, content);
    await mkdir(join(skillsDir, 'empty-folder'));
    await put('ok/SKILL.md', skillMd(`name: ok\ndescription: ${'d'.repeat(1024)}`));
    await put('README.md', 'not a skill folder');

    const { skills, invalid } = await listSkills(skillsDir);
    assert.deepEqual(
      skills.map((skill) => skill.name),
      ['ok'],
    );
    const reasons = new Map(invalid.map((skill) => [skill.folder, skill.reason]));
    for (const [folder, [, reason]] of Object.entries(cases)) assert.match(reasons.get(folder) ?? '(not reported)', reason, folder);
    assert.match(reasons.get('empty-folder')!, /no SKILL\.md/);
    assert.equal(invalid.length, Object.keys(cases).length + 1);
    assert.equal(invalid.find((skill) => skill.folder === 'Upper')?.dir, join(skillsDir, 'Upper'));
  });

  it('is an empty catalog when the skills folder does not exist', async () => {
    assert.deepEqual(await listSkills(join(root, 'missing')), { skills: [], invalid: [] });
  });

  it('reads the disk on every call: added, changed and removed skills show up', async () => {
    assert.deepEqual((await listSkills(skillsDir)).skills, []);
    await put('fresh/SKILL.md', skillMd('name: fresh\ndescription: Version one.'));
    assert.equal((await listSkills(skillsDir)).skills[0]?.description, 'Version one.');
    await put('fresh/SKILL.md', skillMd('name: fresh\ndescription: Version two.'));
    assert.equal((await listSkills(skillsDir)).skills[0]?.description, 'Version two.');
    await rm(join(skillsDir, 'fresh'), { recursive: true });
    assert.deepEqual((await listSkills(skillsDir)).skills, []);
  });

  it('resolves a relative skills folder against the process cwd and follows a linked skill folder', async () => {
    const elsewhere = join(root, 'elsewhere', 'linked');
    await mkdir(elsewhere, { recursive: true });
    await writeFile(join(elsewhere, 'SKILL.md'), skillMd('name: linked\ndescription: Lives elsewhere.'));
    await symlink(elsewhere, join(skillsDir, 'linked'));
    const { skills } = await listSkills(relative(process.cwd(), skillsDir));
    assert.deepEqual(
      skills.map((skill) => skill.name),
      ['linked'],
    );
  });
});

describe('skillCatalogText', () => {
  it('puts one "name: description" per line, folding multi-line descriptions', async () => {
    await put('beta/SKILL.md', skillMd('name: beta\ndescription: |\n  Line one.\n  Line two.'));
    await put('alpha/SKILL.md', skillMd('name: alpha\ndescription: Does alpha things.'));
    assert.equal(skillCatalogText((await listSkills(skillsDir)).skills), 'alpha: Does alpha things.\nbeta: Line one. Line two.');
  });

  it('is empty with no skills', () => {
    assert.equal(skillCatalogText([]), '');
  });
});

describe('loadSkill', () => {
  it('returns the instructions and bundled file paths, recursively, without SKILL.md or hidden files', async () => {
    await put('deploy/SKILL.md', skillMd('name: deploy\ndescription: Deploy the app.', '# Deploy\n\nRun scripts/run.sh.\n'));
    await put('deploy/scripts/run.sh', '#!/bin/sh\n');
    await put('deploy/references/api.md', '# API\n');
    await put('deploy/assets/logo.png', 'png');
    await put('deploy/assets/icons/small.png', 'png');
    await put('deploy/.hidden', 'x');
    const skill = await loadSkill(skillsDir, 'deploy');
    assert.equal(skill.name, 'deploy');
    assert.equal(skill.description, 'Deploy the app.');
    assert.equal(skill.instructions, '# Deploy\n\nRun scripts/run.sh.\n');
    assert.equal(skill.dir, join(skillsDir, 'deploy'));
    assert.deepEqual(skill.files, ['assets/icons/small.png', 'assets/logo.png', 'references/api.md', 'scripts/run.sh']);
    assert.equal(skill.unlistedFiles, 0);
  });

  it(`lists at most ${SKILL_MAX_LISTED_FILES} files and counts the rest`, async () => {
    await put('many/SKILL.md', skillMd('name: many\ndescription: Many files.'));
    await mkdir(join(skillsDir, 'many', 'data'));
    await Promise.all(
      Array.from({ length: SKILL_MAX_LISTED_FILES + 5 }, (_, i) => writeFile(join(skillsDir, 'many', 'data', `f${i}.txt`), '')),
    );
    const skill = await loadSkill(skillsDir, 'many');
    assert.equal(skill.files.length, SKILL_MAX_LISTED_FILES);
    assert.equal(skill.unlistedFiles, 5);
  });

  it('names the installed skills when the name is unknown', async () => {
    await put('alpha/SKILL.md', skillMd('name: alpha\ndescription: A.'));
    await put('beta/SKILL.md', skillMd('name: beta\ndescription: B.'));
    await assert.rejects(loadSkill(skillsDir, 'gamma'), (error: MachineError) => {
      assert.equal(error.code, 'unknown_skill');
      assert.equal(error.message, 'There is no skill named "gamma". Installed skills: alpha, beta.');
      return true;
    });
  });

  it('says so when no skills are installed', async () => {
    await assert.rejects(loadSkill(join(root, 'missing'), 'any'), /No skills are installed in /);
  });

  it('refuses names that could reach outside the skills folder', async () => {
    await mkdir(join(root, '.agents', 'outside'), { recursive: true });
    await writeFile(join(root, '.agents', 'outside', 'SKILL.md'), skillMd('name: outside\ndescription: Not a skill here.'));
    for (const name of ['../outside', 'a/b', '..', 'x\\y']) {
      await assert.rejects(loadSkill(skillsDir, name), (error: MachineError) => {
        assert.equal(error.code, 'invalid_input');
        assert.match(error.message, /is not a skill name/);
        return true;
      });
    }
  });

  it('says why an invalid skill cannot be loaded', async () => {
    await put('broken/SKILL.md', skillMd('name: broken'));
    await assert.rejects(loadSkill(skillsDir, 'broken'), (error: MachineError) => {
      assert.equal(error.code, 'invalid_skill');
      assert.match(error.message, /^Skill "broken" cannot be loaded: the frontmatter has no "description"\. Fix .*broken\/SKILL\.md\.$/);
      return true;
    });
  });
});
