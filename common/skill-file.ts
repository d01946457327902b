// The Agent Skills rules for a SKILL.md, in one place: the host's loader and editor use them, and so
// does the page, to show frontmatter errors as a person types (hence no Node imports here).
import { parse as parseYaml } from 'yaml';
import type * as z from 'zod';
import type { skillMetadata } from './api/skills.js';
import { isValidSkillName, SKILL_NAME_MAX_CHARS } from './skill-name.js';
import { yamlErrorWords } from './yaml-error-words.js';

export { isValidSkillName, SKILL_NAME_MAX_CHARS, SKILL_NAME_PATTERN } from './skill-name.js';

export const SKILL_DESCRIPTION_MAX_CHARS = 1024;
export const SKILL_COMPATIBILITY_MAX_CHARS = 500;

/** The frontmatter fields of a SKILL.md (Agent Skills specification), as the API gives them. */
export type SkillMetadata = z.infer<typeof skillMetadata>;

export type ParsedSkillFile = { ok: true; skill: SkillMetadata; body: string } | { ok: false; reason: string };

/** Parses a SKILL.md found in folder `folder`; a file that breaks the Agent Skills spec gives the reason why. */
export function parseSkillFile(text: string, folder: string): ParsedSkillFile {
  const match = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { ok: false, reason: 'SKILL.md must start with YAML frontmatter between two "---" lines' };
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '');
  } catch (error) {
    // The YAML starts on the file's second line, after the opening "---".
    const { line, words } = yamlErrorWords(error, 2);
    return { ok: false, reason: `the frontmatter is not valid YAML${line ? ` on line ${line}` : ''}: ${words}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, reason: 'the frontmatter must be a YAML mapping with at least name and description' };
  }
  const fields = data as Record<string, unknown>;
  const checked = checkFields(fields, folder);
  if (typeof checked === 'string') return { ok: false, reason: checked };
  return { ok: true, skill: checked, body: text.slice(match[0].length) };
}

function checkFields(fields: Record<string, unknown>, folder: string): SkillMetadata | string {
  const { name, description, license, compatibility, metadata } = fields;
  const allowedTools = fields['allowed-tools'];
  if (name === undefined || name === null) return 'the frontmatter has no "name"';
  if (typeof name !== 'string' || !isValidSkillName(name)) {
    return `name "${String(name)}" is invalid: use 1-${SKILL_NAME_MAX_CHARS} lowercase letters, digits and single hyphens, not starting or ending with a hyphen`;
  }
  if (name !== folder) return `name "${name}" does not match its folder "${folder}"; rename one so they are the same`;
  if (typeof description !== 'string' || description.trim() === '') return 'the frontmatter has no "description"';
  if (description.length > SKILL_DESCRIPTION_MAX_CHARS) {
    return `description is ${description.length} characters long; the limit is ${SKILL_DESCRIPTION_MAX_CHARS}`;
  }
  const skill: SkillMetadata = { name, description };
  if (license !== undefined && license !== null) {
    if (typeof license !== 'string') return '"license" must be a string';
    skill.license = license;
  }
  if (compatibility !== undefined && compatibility !== null) {
    if (typeof compatibility !== 'string' || compatibility.length > SKILL_COMPATIBILITY_MAX_CHARS) {
      return `"compatibility" must be a string of at most ${SKILL_COMPATIBILITY_MAX_CHARS} characters`;
    }
    skill.compatibility = compatibility;
  }
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== 'object' || Array.isArray(metadata)) return '"metadata" must be a mapping of keys to values';
    skill.metadata = Object.fromEntries(
      Object.entries(metadata).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
    );
  }
  if (allowedTools !== undefined && allowedTools !== null) {
    // Kept as written: entries such as "Bash(git add:*)" contain spaces, so splitting would break them.
    if (typeof allowedTools === 'string') skill.allowedTools = allowedTools;
    else if (Array.isArray(allowedTools) && allowedTools.every((tool) => typeof tool === 'string'))
      skill.allowedTools = allowedTools.join(' ');
    else return '"allowed-tools" must be a space-delimited string of tool names';
  }
  return skill;
}
