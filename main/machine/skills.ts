import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { MachineError, fileSystemError } from './errors.js';
import type { SkillMetadata } from '../../common/skill-file.js';
import { isValidSkillName } from '../../common/skill-name.js';

/** Most bundled file paths listed for one skill. */
export const SKILL_MAX_LISTED_FILES = 500;
export const SKILL_FILE = 'SKILL.md';

export interface SkillSummary extends SkillMetadata {
  /** Absolute path of the skill's folder. */
  dir: string;
}

export interface InvalidSkill {
  folder: string;
  /** Absolute path of the skill's folder. */
  dir: string;
  reason: string;
}

export interface SkillCatalog {
  skills: SkillSummary[];
  /** Folders skipped because their SKILL.md is missing or breaks the Agent Skills spec. */
  invalid: InvalidSkill[];
}

export interface LoadedSkill extends SkillSummary {
  /** The body of SKILL.md, after its frontmatter. */
  instructions: string;
  /** Other files of the skill, relative to `dir` with "/" separators, sorted. */
  files: string[];
  /** Files not listed past SKILL_MAX_LISTED_FILES. */
  unlistedFiles: number;
}

/**
 * The skills installed under `skillsDir` (resolved against the process cwd), read from disk on
 * every call so added, changed and removed skills show up without a restart.
 */
export async function listSkills(skillsDir: string): Promise<SkillCatalog> {
  const root = resolve(skillsDir);
  let entries: Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { skills: [], invalid: [] };
    throw fileSystemError(error, root, 'list skills in');
  }
  const catalog: SkillCatalog = { skills: [], invalid: [] };
  const folders = entries.filter((entry) => !entry.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of folders) {
    const dir = join(root, entry.name);
    // A symbolic link to a skill folder counts as a skill folder.
    if (!entry.isDirectory() && !(entry.isSymbolicLink() && (await isDirectory(dir)))) continue;
    const read = await readSkill(dir, entry.name);
    if (read.ok) catalog.skills.push({ ...read.skill, dir });
    else catalog.invalid.push({ folder: entry.name, dir, reason: read.reason });
  }
  return catalog;
}

/** One skill's instructions and the paths of its bundled files. */
export async function loadSkill(skillsDir: string, name: string): Promise<LoadedSkill> {
  const root = resolve(skillsDir);
  // The naming rule also keeps the name from reaching outside the skills folder ("/", "..").
  if (typeof name !== 'string' || !isValidSkillName(name)) {
    throw new MachineError('invalid_input', `"${String(name)}" is not a skill name. ${await knownSkills(root)}`);
  }
  const dir = join(root, name);
  if (!(await isDirectory(dir))) throw new MachineError('unknown_skill', `There is no skill named "${name}". ${await knownSkills(root)}`);
  const read = await readSkill(dir, name);
  if (!read.ok) {
    throw new MachineError('invalid_skill', `Skill "${name}" cannot be loaded: ${read.reason}. Fix ${join(dir, SKILL_FILE)}.`);
  }
  return { ...read.skill, dir, instructions: read.body, ...(await bundledFiles(dir)) };
}

/** The files of a skill folder other than SKILL.md, relative to it, at most SKILL_MAX_LISTED_FILES. */
export async function bundledFiles(dir: string): Promise<{ files: string[]; unlistedFiles: number }> {
  const files: string[] = [];
  const unlistedFiles = await listFiles(dir, '', files);
  return { files, unlistedFiles };
}

/** The catalog as `name: description`, one skill per line (for the resource://skills resource). */
export function skillCatalogText(skills: SkillSummary[]): string {
  return skills.map((skill) => `${skill.name}: ${skill.description.replace(/\s+/g, ' ').trim()}`).join('\n');
}

async function readSkill(
  dir: string,
  folder: string,
): Promise<{ ok: true; skill: SkillMetadata; body: string } | { ok: false; reason: string }> {
  let text: string;
  try {
    text = await readFile(join(dir, SKILL_FILE), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: `the folder has no ${SKILL_FILE}` };
    return { ok: false, reason: `${SKILL_FILE} cannot be read: ${fileSystemError(error, join(dir, SKILL_FILE), 'read').message}` };
  }
  // With the YAML parser: loaded by the first skill read, so that a server without skills never loads it.
  const { parseSkillFile } = await import('../../common/skill-file.js');
  return parseSkillFile(text, folder);
}

async function knownSkills(root: string): Promise<string> {
  const { skills } = await listSkills(root);
  if (skills.length === 0) return `No skills are installed in ${root}.`;
  return `Installed skills: ${skills.map((skill) => skill.name).join(', ')}.`;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** Adds `dir`'s files (recursively, hidden ones skipped) to `into`; returns how many did not fit. */
async function listFiles(dir: string, prefix: string, into: string[]): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
  let unlisted = 0;
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    const relative = prefix + entry.name;
    if (relative === SKILL_FILE) continue;
    // Links are listed, not followed: a link back up the tree would never end.
    if (entry.isDirectory()) unlisted += await listFiles(join(dir, entry.name), `${relative}/`, into);
    else if (into.length < SKILL_MAX_LISTED_FILES) into.push(relative);
    else unlisted += 1;
  }
  return unlisted;
}
