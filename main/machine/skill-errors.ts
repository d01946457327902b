// Errors of the skill editing functions; each message tells the person what to do next.

/** The request itself is wrong (a name, a description, SKILL.md's frontmatter): nothing was changed. */
export class SkillInputError extends Error {
  override readonly name = 'SkillInputError';
}

export class SkillExistsError extends Error {
  override readonly name = 'SkillExistsError';
}

/** SKILL.md changed on disk since the person opened it: saving would overwrite that change. */
export class SkillConflictError extends Error {
  override readonly name = 'SkillConflictError';
}

export class SkillNotFoundError extends Error {
  override readonly name = 'SkillNotFoundError';
}
