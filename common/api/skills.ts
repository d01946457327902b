import * as z from 'zod';

// The Skills API (main/http/skills-routes.ts), as the host sends and takes it and the page reads it.

/** The frontmatter fields of a SKILL.md (Agent Skills specification; checked by skill-file.ts). */
export const skillMetadata = z.object({
  name: z.string(),
  description: z.string(),
  license: z.string().optional(),
  compatibility: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  /** As written: the Agent Skills spec's space-delimited list of tool names (a YAML list is joined with spaces). */
  allowedTools: z.string().optional(),
});

/** GET /api/skills: every folder of the skills folder, valid or not. */
export const skillListing = z.object({
  /** The skills folder (absolute). */
  dir: z.string(),
  skills: z.array(skillMetadata.extend({ dir: z.string() })),
  /** Folders agents do not see, with the reason why. */
  invalid: z.array(z.object({ folder: z.string(), dir: z.string(), reason: z.string() })),
});
export type SkillListing = z.infer<typeof skillListing>;

/** GET /api/skills/:name, and the answer to creating or saving one. */
export const skillDetail = z.object({
  /** The folder's name (for a valid skill, also its frontmatter name). */
  name: z.string(),
  dir: z.string(),
  /** SKILL.md as written, or null when the folder has none. */
  content: z.string().nullable(),
  /** A tag of that content: a save that names it is refused if SKILL.md has changed since. */
  version: z.string(),
  /** The other files of the folder, relative to it with "/" separators, sorted. */
  files: z.array(z.string()),
  /** Files left out of `files` past its limit. */
  unlistedFiles: z.number(),
});
export type SkillDetail = z.infer<typeof skillDetail>;

// The names and the frontmatter are checked by the editing functions, in the words the page shows.
export const createSkillBody = z.object({ name: z.string().max(200), description: z.string().max(5_000) }).strict();
/** Under the control plane's JSON limit, with room for escaping. */
export const saveSkillBody = z.object({ content: z.string().max(200_000), version: z.string().max(100).optional() }).strict();
