import { join } from 'node:path';
import { z } from 'zod';
import { VersionedJsonFile } from '../state/versioned-json-file.js';
import type { ToolSearchMode } from '../connections/tool-search/tool-search-mode.js';
import { placeFromRoot, PlacePathError, type Place } from './place-root.js';
import { LOCAL_PERSON, printableProblem, userIdProblem } from './user-id.js';

export const ACCESS_FILE = 'access.json';

export interface PersonEntry {
  readonly name: string;
  readonly disabled?: boolean;
}

/** Who may use a place beyond what its kind grants (see access-rules.ts). */
export interface PlaceAccess {
  readonly editors?: readonly string[];
  readonly readers?: readonly string[];
}

/** A place's entry: its access lists and its own settings. */
export interface PlaceEntry extends PlaceAccess {
  /** Whether its agents get tool search; absent is `auto`. */
  readonly toolSearch?: 'on' | 'off';
}

/** The whole directory: people by user id, and access by place root. It holds no secrets. */
export interface AccessDirectorySnapshot {
  readonly version: 1;
  readonly people: Readonly<Record<string, PersonEntry>>;
  readonly places: Readonly<Record<string, PlaceEntry>>;
}

/** A user id, name or place root given to a mutation is not acceptable; the message says why. */
export class AccessInputError extends Error {
  override readonly name = 'AccessInputError';
}

export class UnknownPersonError extends Error {
  override readonly name = 'UnknownPersonError';
  constructor(id: string) {
    super(`${JSON.stringify(id)} is not in the access directory: it names no person and is on no place's list.`);
  }
}

const CODE_EDITORS = "A Code's only editor is its owner; add its participants as readers.";

const userId = z.string().superRefine((id, ctx) => {
  const problem = userIdProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: `a user id ${problem}` });
});

const directorySchema = z
  .strictObject({
    version: z.literal(1),
    people: z.record(
      userId,
      z.strictObject({
        name: z.string().superRefine((name, ctx) => {
          const problem = printableProblem(name);
          if (problem) ctx.addIssue({ code: 'custom', message: `a name ${problem}` });
        }),
        disabled: z.boolean().optional(),
      }),
    ),
    places: z.record(
      z.string(),
      z.strictObject({ editors: z.array(userId).optional(), readers: z.array(userId).optional(), toolSearch: z.enum(['on', 'off']).optional() }),
    ),
  })
  .superRefine((directory, ctx) => {
    for (const [root, access] of Object.entries(directory.places)) {
      try {
        if (placeFromRoot(root).kind === 'code' && access.editors?.length) {
          ctx.addIssue({ code: 'custom', path: ['places', root, 'editors'], message: CODE_EDITORS });
        }
      } catch (error) {
        if (!(error instanceof PlacePathError)) throw error;
        ctx.addIssue({ code: 'custom', path: ['places', root], message: error.message });
      }
    }
  });

const EMPTY: AccessDirectorySnapshot = { version: 1, people: {}, places: {} };

/**
 * `<stateDir>/access.json`: people (name, disabled) and each place's editors and readers. The
 * server owns it; the CLI may edit it too, which every query notices (one `stat` when unchanged).
 */
export class AccessDirectory {
  private readonly file: VersionedJsonFile<AccessDirectorySnapshot>;

  constructor(stateDir: string) {
    this.file = new VersionedJsonFile({
      path: join(stateDir, ACCESS_FILE),
      version: 1,
      schema: directorySchema,
      empty: EMPTY,
      title: 'The access directory',
    });
  }

  get path(): string {
    return this.file.path;
  }

  /** The directory as the file holds it now (deeply frozen). An absent file is an empty directory. */
  snapshot(): Promise<AccessDirectorySnapshot> {
    return this.file.read();
  }

  /** Adds a person or replaces their entry. `local` (whoever runs the app) cannot be disabled. */
  async setPerson(id: string, person: { name: string; disabled?: boolean }): Promise<AccessDirectorySnapshot> {
    checkUserId(id);
    const name = person.name.trim();
    const problem = printableProblem(name);
    if (problem) throw new AccessInputError(`A person's name ${problem}.`);
    if (id === LOCAL_PERSON && person.disabled) {
      throw new AccessInputError(`"${LOCAL_PERSON}" is whoever runs this app and cannot be disabled.`);
    }
    const entry: PersonEntry = person.disabled ? { name, disabled: true } : { name };
    return this.file.update((current) => ({ ...current, people: { ...current.people, [id]: entry } }));
  }

  /**
   * Forgets a person: their entry and their place on every list. To keep someone out, disable them
   * instead: a forgotten person who still holds a valid login reads what any authenticated person reads.
   */
  async removePerson(id: string): Promise<AccessDirectorySnapshot> {
    return this.file.update((current) => {
      const listed = Object.values(current.places).some((a) => a.editors?.includes(id) || a.readers?.includes(id));
      if (!Object.hasOwn(current.people, id) && !listed) throw new UnknownPersonError(id);
      const people = Object.fromEntries(Object.entries(current.people).filter(([other]) => other !== id));
      const places = Object.fromEntries(
        Object.entries(current.places).flatMap(([root, access]) => {
          const kept = withoutEmptyLists({
            ...access,
            editors: access.editors?.filter((other) => other !== id),
            readers: access.readers?.filter((other) => other !== id),
          });
          return kept ? [[root, kept]] : [];
        }),
      );
      return { ...current, people, places };
    });
  }

  /**
   * Replaces a place's editors and readers (duplicates dropped, order kept). Empty lists remove the
   * place's entry, which for This machine means every authenticated person reads it again.
   */
  async setPlaceAccess(root: string, access: PlaceAccess): Promise<AccessDirectorySnapshot> {
    const place = checkPlaceRoot(root);
    const editors = uniqueUserIds(access.editors);
    const readers = uniqueUserIds(access.readers);
    if (place.kind === 'code' && editors.length > 0) {
      throw new AccessInputError(`${place.label}: ${CODE_EDITORS}`);
    }
    return this.file.update((current) => withPlace(current, root, withoutEmptyLists({ ...current.places[root], editors, readers })));
  }

  /** Sets whether the place's agents get tool search; `auto` (the default) removes the setting. */
  async setPlaceToolSearch(root: string, mode: ToolSearchMode): Promise<AccessDirectorySnapshot> {
    checkPlaceRoot(root);
    return this.file.update((current) => {
      const { toolSearch: _, ...rest } = current.places[root] ?? {};
      return withPlace(current, root, withoutEmptyLists(mode === 'auto' ? rest : { ...rest, toolSearch: mode }));
    });
  }
}

function checkPlaceRoot(root: string): Place {
  try {
    return placeFromRoot(root);
  } catch (error) {
    if (error instanceof PlacePathError) throw new AccessInputError(error.message);
    throw error;
  }
}

/** The directory with the place's entry replaced, or removed when there is none. */
function withPlace(current: AccessDirectorySnapshot, root: string, entry: PlaceEntry | undefined): AccessDirectorySnapshot {
  const places = Object.fromEntries(Object.entries(current.places).filter(([other]) => other !== root));
  return { ...current, places: entry ? { ...places, [root]: entry } : places };
}

function checkUserId(id: string): void {
  const problem = userIdProblem(id);
  if (problem) throw new AccessInputError(`The user id ${JSON.stringify(id)} ${problem}.`);
}

function uniqueUserIds(ids: readonly string[] = []): string[] {
  ids.forEach(checkUserId);
  return [...new Set(ids)];
}

/** The entry without its empty lists (its settings kept), or nothing if nothing is left. */
function withoutEmptyLists(entry: PlaceEntry): PlaceEntry | undefined {
  const { editors, readers, ...settings } = entry;
  const kept: PlaceEntry = { ...settings, ...(editors?.length && { editors }), ...(readers?.length && { readers }) };
  return Object.keys(kept).length > 0 ? kept : undefined;
}
