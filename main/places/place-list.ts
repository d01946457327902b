import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AccessDirectorySnapshot } from './access-directory.js';
import { canRead } from './access-rules.js';
import { placeFromRoot, PlacePathError, THIS_MACHINE, type Place } from './place-root.js';

/** Folder entries read from disk at most per listing, so a huge workspace cannot stall the page. */
export const MAX_SCANNED_ENTRIES = 5000;

export interface PlaceList {
  /** This machine first, then by label. */
  places: Place[];
  /** The disk scan stopped at MAX_SCANNED_ENTRIES: some place folders may be missing. */
  truncated: boolean;
}

/**
 * The places `person` can read: This machine, every place folder on disk (`Workflow/<name>`,
 * `Crew/<id>`, `_users/<owner>/Chats/{Work,Code}/projects/<id>`), every root the directory names and
 * `extraRoots` (e.g. places that have connections, whose folder may be gone).
 */
export async function listPlaces(
  workspaceRoot: string,
  dir: AccessDirectorySnapshot,
  person: string,
  extraRoots: Iterable<string> = [],
): Promise<PlaceList> {
  const found = new Map<string, Place>([['', THIS_MACHINE]]);
  // Roots from the directory and the caller must be roots: a bad one is their error, not a stray folder.
  for (const root of [...Object.keys(dir.places), ...extraRoots]) found.set(root, placeFromRoot(root));
  const addFolder = (root: string): void => {
    const place = placeOfFolder(root);
    if (place) found.set(root, place);
  };
  const scan = new FolderScan(workspaceRoot);
  for (const kind of ['Workflow', 'Crew']) {
    for (const name of await scan.folders(kind)) addFolder(`${kind}/${name}`);
  }
  for (const owner of await scan.folders('_users')) {
    for (const area of ['Work', 'Code']) {
      const projects = `_users/${owner}/Chats/${area}/projects`;
      for (const id of await scan.folders(projects)) addFolder(`${projects}/${id}`);
    }
  }
  const places = [...found.values()].filter((place) => canRead(dir, person, place));
  places.sort((a, b) => (a.kind === 'machine' ? -1 : b.kind === 'machine' ? 1 : byLabel.compare(a.label, b.label)));
  return { places, truncated: scan.truncated };
}

const byLabel = new Intl.Collator('en', { numeric: true });

/** A folder whose name cannot be part of a root (e.g. a backslash or a control character) is no place. */
function placeOfFolder(root: string): Place | undefined {
  try {
    return placeFromRoot(root);
  } catch (error) {
    if (error instanceof PlacePathError) return undefined;
    throw error;
  }
}

/** Lists sub-folders under one shared budget of entries. */
class FolderScan {
  private remaining = MAX_SCANNED_ENTRIES;
  truncated = false;

  constructor(private readonly workspaceRoot: string) {}

  /** The names of the folders in `relative` (not links, not dot-folders); none if it cannot be read. */
  async folders(relative: string): Promise<string[]> {
    const names: string[] = [];
    if (this.truncated) return names;
    let handle;
    try {
      handle = await opendir(join(this.workspaceRoot, ...relative.split('/')));
    } catch (error) {
      if (UNREADABLE.has((error as NodeJS.ErrnoException).code ?? '')) return names;
      throw error;
    }
    // Links are left out: a place is a folder of the workspace, and a link may lead outside it.
    for await (const entry of handle) {
      if (this.remaining === 0) {
        this.truncated = true;
        break; // Ends the iteration, which closes the folder.
      }
      this.remaining--;
      if (entry.isDirectory() && !entry.name.startsWith('.')) names.push(entry.name);
    }
    return names;
  }
}

const UNREADABLE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM']);
