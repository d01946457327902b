import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { isValidSkillName, parseSkillFile, SKILL_DESCRIPTION_MAX_CHARS, SKILL_NAME_MAX_CHARS } from '../../common/skill-file.js';
import type { SkillDetail } from '../../common/api/skills.js';
import { writeFileAtomic } from '../state/atomic-write.js';
import { fileSystemError } from './errors.js';
import { SkillConflictError, SkillExistsError, SkillInputError, SkillNotFoundError } from './skill-errors.js';
import { skillFolderPath } from './skill-folder.js';
import { bundledFiles, SKILL_FILE } from './skills.js';

// What the page does to skills: create one from a template, read one, save its SKILL.md, delete it.
// Every check comes before the first change, so a refused request leaves the disk as it was.

export interface NewSkill {
  name: string;
  description: string;
}

/** Makes `<skills dir>/<name>/SKILL.md` from a template; refuses a name that is taken. */
export async function createSkill(skillsDir: string, skill: NewSkill): Promise<SkillDetail> {
  const { name } = skill;
  const description = skill.description.trim();
  if (!isValidSkillName(name)) {
    throw new SkillInputError(
      `"${name}" cannot be a skill name: use 1-${SKILL_NAME_MAX_CHARS} lowercase letters, digits and single hyphens, not starting or ending with a hyphen (for example pdf-tools).`,
    );
  }
  if (!description) throw new SkillInputError('Describe what the skill does and when to use it: agents choose a skill by its description.');
  if (description.length > SKILL_DESCRIPTION_MAX_CHARS) {
    throw new SkillInputError(
      `The description is ${description.length} characters long; shorten it to ${SKILL_DESCRIPTION_MAX_CHARS} at most.`,
    );
  }
  const root = resolve(skillsDir);
  const dir = skillFolderPath(root, name);
  await mkdir(root, { recursive: true }).catch((error: unknown) => {
    throw fileSystemError(error, root, 'create');
  });
  try {
    // Not recursive: creating the folder is what claims the name, so two creations cannot both win.
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new SkillExistsError(`A skill named "${name}" already exists. Pick another name, or open ${name} in the list to edit it.`);
    }
    throw fileSystemError(error, dir, 'create');
  }
  try {
    await writeFileAtomic(join(dir, SKILL_FILE), skillTemplate(name, description));
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw fileSystemError(error, join(dir, SKILL_FILE), 'write');
  }
  return readSkillDetail(root, name);
}

/** One skill folder as the page shows it: SKILL.md as written (valid or not) and its other files. */
export async function readSkillDetail(skillsDir: string, name: string): Promise<SkillDetail> {
  const { dir } = await existingFolder(skillsDir, name);
  const file = join(dir, SKILL_FILE);
  const content = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw fileSystemError(error, file, 'read');
  });
  return { name, dir, content, version: versionOf(content), ...(await bundledFiles(dir)) };
}

/**
 * Replaces a skill's SKILL.md with `content`, which must pass the same checks as the catalog's
 * (frontmatter name equal to the folder's, description, ...). Written atomically, keeping the mode.
 * With `version` (of the SKILL.md the person started from), refuses to overwrite a change made on
 * disk since, by an agent or another editor.
 */
export async function saveSkillFile(skillsDir: string, name: string, content: string, version?: string): Promise<SkillDetail> {
  skillFolderPath(skillsDir, name);
  const parsed = parseSkillFile(content, name);
  if (!parsed.ok) throw new SkillInputError(`SKILL.md was not saved: ${parsed.reason}.`);
  const { dir } = await existingFolder(skillsDir, name);
  const file = join(dir, SKILL_FILE);
  if (version !== undefined) {
    const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw fileSystemError(error, file, 'read');
    });
    if (versionOf(current) !== version) {
      throw new SkillConflictError(
        `SKILL.md of ${name} changed on disk after you opened it (an agent or another editor changed it), so your text was not saved over it. Copy your text, reload the skill, then make your change again.`,
      );
    }
  }
  const mode = await stat(file).then(
    (info) => info.mode & 0o7777,
    () => undefined,
  );
  try {
    await writeFileAtomic(file, content, mode === undefined ? {} : { mode });
  } catch (error) {
    throw fileSystemError(error, file, 'write');
  }
  return readSkillDetail(skillsDir, name);
}

/** Deletes a skill folder and everything in it; for a linked skill, only the link. */
export async function deleteSkill(skillsDir: string, name: string): Promise<void> {
  const { dir, linked } = await existingFolder(skillsDir, name);
  try {
    // The folder a link points to is outside the skills folder: not this app's to delete. rm never
    // follows links inside the folder either; it removes the links themselves.
    if (linked) await unlink(dir);
    else await rm(dir, { recursive: true });
  } catch (error) {
    throw fileSystemError(error, dir, 'delete');
  }
}

function versionOf(content: string | null): string {
  return content === null ? 'none' : createHash('sha256').update(content).digest('base64url');
}

/** SKILL.md of a new skill: the frontmatter, then the outline of instructions for the person to fill in. */
function skillTemplate(name: string, description: string): string {
  const title = name.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());
  // A YAML writer, not string pasting: a description with ": " or quotes stays one valid string.
  const frontmatter = stringify({ name, description }, { lineWidth: 0 });
  return `---
${frontmatter}---
# ${title}

Write here what an agent should do when it uses this skill, step by step.

## When to use

- The requests or situations this skill is for.

## Steps

1. The first thing to do.
2. The next one.

Files bundled with the skill (in scripts/, references/ or assets/) are read with the read tool; name them here by their path in this folder.
`;
}

/** The folder of an installed skill, as the catalog counts them: a folder, or a link to one. */
async function existingFolder(skillsDir: string, name: string): Promise<{ dir: string; linked: boolean }> {
  const dir = skillFolderPath(skillsDir, name);
  const notFound = () =>
    new SkillNotFoundError(
      `There is no skill named "${name}" in ${resolve(skillsDir)}. It may have been deleted or renamed: reload the list.`,
    );
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw notFound();
    throw fileSystemError(error, dir, 'open');
  });
  if (info.isDirectory()) return { dir, linked: false };
  if (
    info.isSymbolicLink() &&
    (await stat(dir).then(
      (target) => target.isDirectory(),
      () => false,
    ))
  )
    return { dir, linked: true };
  throw notFound();
}
