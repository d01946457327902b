import { join, resolve } from 'node:path';
import { SkillInputError } from './skill-errors.js';

/** Longest folder name most file systems allow. */
const FOLDER_NAME_MAX_CHARS = 255;

/**
 * The folder of skill `name`, always a direct child of the skills folder: a name that could reach
 * anywhere else (a separator, "..", an absolute path) is refused, as is a hidden one (the catalog
 * skips those). No file system access: callers check what is there.
 *
 * A folder need not follow the skill naming rule here, so that one listed as invalid for its name
 * can still be shown, opened and deleted.
 */
export function skillFolderPath(skillsDir: string, name: string): string {
  const root = resolve(skillsDir);
  const refuse = () =>
    new SkillInputError(
      `"${String(name)}" is not a skill folder name: a skill is a folder directly inside ${root}. Pick one from the list.`,
    );
  if (typeof name !== 'string' || name === '' || name.length > FOLDER_NAME_MAX_CHARS || name.startsWith('.') || /[/\\\0]/.test(name))
    throw refuse();
  return join(root, name);
}
