import { open, readdir, readFile, rename } from 'node:fs/promises';
import { readdirSync, type BigIntStats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  absentStamp,
  currentStamp,
  emptyIfAbsent,
  fileStamp,
  isNotFound,
  isSettled,
  statOrAbsent,
  statSyncOrAbsent,
} from './file-stamp.js';

// How the server's JSON state files are read, for every kind of them: content and stat identity
// from one open file, JSON without `__proto__` keys, and a corrupt file moved aside (never emptied)
// and refused until someone fixes or deletes it.

/** What one read found: the file's text, or, while it is absent, the newest aside of it if any. */
export type StateFileRead = { stamp: string; settled: boolean } & ({ text: string } | { absent: true; aside?: string });

/** A JSON text, or what is wrong with it in words (for "moved aside because ..."). */
export type JsonParse = { json: unknown } | { problem: string };

/**
 * Reads `path`: the text and the stat it was read with, or, when it is absent, the folder's stamp
 * (taken before listing it, so a change in between only causes a re-read) and the newest aside.
 * `now` tells whether the file has settled.
 */
export async function readStateFile(path: string, now: () => number = Date.now): Promise<StateFileRead> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const dirStats = await statOrAbsent(dirname(path));
    const aside = dirStats && (await newestAside(path));
    return {
      stamp: absentStamp(dirStats),
      settled: dirStats === undefined || isSettled(dirStats, now()),
      absent: true,
      ...(aside && { aside }),
    };
  }
  let stats: BigIntStats;
  let text: string;
  try {
    // Stamp and content come from the same open file, so they always belong together.
    stats = await handle.stat({ bigint: true });
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  return { stamp: fileStamp(stats), settled: isSettled(stats, now()), text };
}

/**
 * What readStateFile finds of a file that is absent, found without the thread pool (the state folder
 * is local and small, as for the stat of every read): for the reads in the 2 s after the folder
 * changed, when its stamp cannot vouch for it alone. Undefined when the file is there after all.
 */
export function readAbsentStateFileSync(
  path: string,
  now: () => number = Date.now,
): { stamp: string; settled: boolean; absent: true; aside?: string } | undefined {
  if (statSyncOrAbsent(path)) return undefined;
  const dirStats = statSyncOrAbsent(dirname(path));
  const aside = dirStats && newestOf(path, listSync(dirname(path)));
  return {
    stamp: absentStamp(dirStats),
    settled: dirStats === undefined || isSettled(dirStats, now()),
    absent: true,
    ...(aside && { aside }),
  };
}

/** JSON.parse that refuses `__proto__` keys: keys are user data, and that one would be dropped or change a prototype. */
export function parseStateJson(text: string): JsonParse {
  try {
    return {
      json: JSON.parse(text, (key, value: unknown) => {
        if (key === '__proto__') throw new ProtoKeyError();
        return value;
      }),
    };
  } catch (error) {
    return { problem: error instanceof ProtoKeyError ? 'it contains a "__proto__" key' : 'it is not valid JSON' };
  }
}

/** Moves the corrupt file that was read (stamp `stamp`) to `<path>.corrupt-<time>`; one replaced meanwhile is left for a re-read. */
export async function moveAside(path: string, stamp: string): Promise<void> {
  if (currentStamp(path) !== stamp) return;
  const base = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  let aside = base;
  for (let n = 1; await statOrAbsent(aside); n++) aside = `${base}-${n}`;
  try {
    await rename(path, aside);
  } catch (error) {
    // Another process moved it first; the re-read finds its aside.
    if (!isNotFound(error)) throw error;
  }
}

/** The aside's text as it reads now (it may have been fixed but not moved back yet), if it can be read. */
export function readAside(aside: string): Promise<string | undefined> {
  return readFile(aside, 'utf8').catch(() => undefined);
}

async function newestAside(path: string): Promise<string | undefined> {
  return newestOf(path, await readdir(dirname(path)).catch(emptyIfAbsent));
}

function listSync(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch (error) {
    return emptyIfAbsent(error);
  }
}

/** The newest aside of `path` among the names of its folder. */
function newestOf(path: string, names: string[]): string | undefined {
  const prefix = `${basename(path)}.corrupt-`;
  const newest = names
    .filter((name) => name.startsWith(prefix))
    .sort()
    .at(-1);
  return newest === undefined ? undefined : join(dirname(path), newest);
}

class ProtoKeyError extends Error {}
