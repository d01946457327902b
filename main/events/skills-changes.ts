import { watch, type FSWatcher } from 'node:fs';

/**
 * Hears changes anywhere under the skills folder (a SKILL.md edited by hand, a folder added), so the
 * page shows them at once; `changed` is told once per burst of writes. Where the folder is absent or
 * the platform cannot watch a tree, the skills watch's own reading of the folder tells of new and
 * renamed skills instead. Stops with the returned function.
 */
export function watchSkillsFolder(dir: string, changed: () => void): () => void {
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    watcher = watch(dir, { recursive: true, persistent: false }, () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        changed();
      }, 20);
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  return () => {
    watcher?.close();
    clearTimeout(timer);
  };
}
