// Errors of the skill editing functions; each message tells the person what to do next.

/** The request itself is wrong (a name, a description, SKILL.md's frontmatter): nothing was changed. */
export class SkillInputError extends Error {
  override readonly name = 'SkillInputError';
}

export class SkillExistsError extends Error {
  override readonly name = 'SkillExistsError';
}

export class SkillNotFoundError extends Error {
  override readonly name = 'SkillNotFoundError';
}
