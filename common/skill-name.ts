// The Agent Skills naming rule, apart from the SKILL.md parser: the host checks names without
// loading the YAML parser, which it loads with the first skill it reads.

/** Agent Skills naming rule: lowercase letters, digits and single hyphens, no hyphen at either end. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX_CHARS = 64;

export function isValidSkillName(name: string): boolean {
  return name.length <= SKILL_NAME_MAX_CHARS && SKILL_NAME_PATTERN.test(name);
}
