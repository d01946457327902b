import type { SkillMetadata } from './skill-file.js';

// The Skills API's answers (main/http/skills-routes.ts), as the host sends them and the page reads them.

/** GET /api/skills: every folder of the skills folder, valid or not. */
export interface SkillListing {
  /** The skills folder (absolute). */
  dir: string;
  skills: Array<SkillMetadata & { dir: string }>;
  /** Folders agents do not see, with the reason why. */
  invalid: Array<{ folder: string; dir: string; reason: string }>;
}

/** GET /api/skills/:name, and the answer to creating or saving one. */
export interface SkillDetail {
  /** The folder's name (for a valid skill, also its frontmatter name). */
  name: string;
  dir: string;
  /** SKILL.md as written, or null when the folder has none. */
  content: string | null;
  /** A tag of that content: a save that names it is refused if SKILL.md has changed since. */
  version: string;
  /** The other files of the folder, relative to it with "/" separators, sorted. */
  files: string[];
  /** Files left out of `files` past its limit. */
  unlistedFiles: number;
}
