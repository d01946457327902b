import { join } from 'node:path';
import * as z from 'zod';
import { VersionedJsonFile } from '../state/versioned-json-file.js';
import type { ToolSearchMode } from '../../common/tool-search-mode.js';
import { placeFromRoot, PlacePathError, type Place } from './place-root.js';
import { checkPolicy, MACHINE_POLICY, PolicyInputError, type PlaceLimits, type PolicyParts, type SandboxPolicy } from './sandbox-policy.js';
import { LOCAL_PERSON, printableProblem, userIdProblem } from './user-id.js';

export const ACCESS_FILE = 'access.json';

export interface PersonEntry {
  readonly name: string;
  readonly disabled?: boolean | undefined;
}

/** Who may use a place beyond what its kind grants (see access-rules.ts), and what its agents reach. */
export interface PlaceAccess {
  readonly editors?: readonly string[] | undefined;
  readonly readers?: readonly string[] | undefined;
  /** The sandbox policy of the place's agents; absent means `machine` (sandbox-policy.ts). */
  readonly policy?: StoredPolicy | undefined;
  /** Whether its agents get tool search instead of every tool; absent is `auto`. */
  readonly toolSearch?: 'on' | 'off' | undefined;
}

/** A policy other than `machine`, as the file keeps it. */
export interface StoredPolicy {
  readonly kind: 'place' | 'strict';
  readonly folders?: readonly string[] | undefined;
  /** The hosts its sandboxed commands may reach (network-allow-list.ts); absent: none listed. */
  readonly network?: readonly string[] | undefined;
  /** Paths sealed beyond the credential stores; absent: none. */
  readonly seal?: readonly string[] | undefined;
  /** Credential stores lifted for this place; absent: none. */
  readonly unseal?: readonly string[] | undefined;
  /** Limits other than the machine's defaults; absent: the defaults. */
  readonly limits?: PlaceLimits | undefined;
}

/** The whole directory: people by user id, and access by place root. It holds no secrets. */
export interface AccessDirectorySnapshot {
  readonly version: 1;
  readonly people: Readonly<Record<string, PersonEntry>>;
  readonly places: Readonly<Record<string, PlaceAccess>>;
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
      z.strictObject({
        editors: z.array(userId).optional(),
        readers: z.array(userId).optional(),
        policy: z
          .strictObject({
            kind: z.enum(['place', 'strict']),
            folders: z.array(z.string()).optional(),
            network: z.array(z.string()).optional(),
            seal: z.array(z.string()).optional(),
            unseal: z.array(z.string()).optional(),
            limits: z
              .strictObject({ processes: z.number().optional(), memoryMb: z.number().optional(), tmpMb: z.number().optional() })
              .optional(),
          })
          .superRefine((policy, ctx) => {
            try {
              checkPolicy(policy.kind, policy);
            } catch (error) {
              if (!(error instanceof PolicyInputError)) throw error;
              ctx.addIssue({ code: 'custom', message: error.message });
            }
          })
          .optional(),
        toolSearch: z.enum(['on', 'off']).optional(),
      }),
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
          const kept = compactEntry({
            editors: access.editors?.filter((other) => other !== id),
            readers: access.readers?.filter((other) => other !== id),
            policy: access.policy,
            toolSearch: access.toolSearch,
          });
          return kept ? [[root, kept]] : [];
        }),
      );
      return { ...current, people, places };
    });
  }

  /**
   * Replaces a place's editors and readers (duplicates dropped, order kept); its policy stays. Empty
   * lists remove them, which for This machine means every authenticated person reads it again.
   */
  async setPlaceAccess(root: string, access: Pick<PlaceAccess, 'editors' | 'readers'>): Promise<AccessDirectorySnapshot> {
    const place = placeOfRoot(root);
    const editors = uniqueUserIds(access.editors);
    const readers = uniqueUserIds(access.readers);
    if (place.kind === 'code' && editors.length > 0) {
      throw new AccessInputError(`${place.label}: ${CODE_EDITORS}`);
    }
    return this.updatePlace(root, (entry) => ({ ...entry, editors, readers }));
  }

  /**
   * Sets the sandbox policy of a place's agents (for This machine, `""`: of tokens that name no
   * place). `machine` is kept as no policy at all; the folders are checked and normalized. The
   * network allow-list, seals and limits stay, unless the policy becomes `machine` (which reaches
   * everything).
   */
  async setPlacePolicy(root: string, kind: string, folders: readonly string[] = []): Promise<AccessDirectorySnapshot> {
    placeOfRoot(root);
    return this.updatePlace(root, (entry) => {
      const kept = kind === 'machine' ? {} : { ...entry.policy };
      return { ...entry, policy: storedPolicy(checkedPolicy(kind, { ...kept, folders })) };
    });
  }

  /**
   * Sets what is sealed for a place's agents beyond the credential stores (`seal`) and which
   * credential stores they may reach (`unseal`). Only with the place or strict policy.
   */
  async setPlaceSeals(root: string, seals: { seal: readonly string[]; unseal: readonly string[] }): Promise<AccessDirectorySnapshot> {
    return this.updateSandboxed(root, (policy) => ({ ...policy, seal: seals.seal, unseal: seals.unseal }));
  }

  /** Sets the limits of a place's sandboxed commands (absent ones: the machine's defaults). Only with the place or strict policy. */
  async setPlaceLimits(root: string, limits: PlaceLimits): Promise<AccessDirectorySnapshot> {
    return this.updateSandboxed(root, (policy) => ({ ...policy, limits }), 'whose commands run outside any sandbox');
  }

  /**
   * Sets the hosts a place's sandboxed commands may reach (an empty list: none beyond what its
   * policy gives). Only with the place or strict policy: machine reaches every host already.
   */
  async setPlaceNetwork(root: string, hosts: readonly string[]): Promise<AccessDirectorySnapshot> {
    return this.updateSandboxed(root, (policy) => ({ ...policy, network: hosts }), 'whose commands reach every host already');
  }

  /** Changes the parts of a place or strict policy; refused under machine, which reaches everything already. */
  private updateSandboxed(
    root: string,
    change: (policy: StoredPolicy) => PolicyParts,
    why = 'which reaches everything already',
  ): Promise<AccessDirectorySnapshot> {
    const place = placeOfRoot(root);
    return this.updatePlace(root, (entry) => {
      if (!entry.policy)
        throw new AccessInputError(`${place.label} has the machine policy, ${why}: choose the place or strict policy first.`);
      return { ...entry, policy: storedPolicy(checkedPolicy(entry.policy.kind, change(entry.policy))) };
    });
  }

  /** Sets whether the place's agents get tool search; `auto` (the default) removes the setting. */
  async setPlaceToolSearch(root: string, mode: ToolSearchMode): Promise<AccessDirectorySnapshot> {
    placeOfRoot(root);
    return this.updatePlace(root, (entry) => ({ ...entry, toolSearch: mode === 'auto' ? undefined : mode }));
  }

  private updatePlace(root: string, change: (entry: PlaceAccess) => PlaceAccess): Promise<AccessDirectorySnapshot> {
    return this.file.update((current) => {
      const previous = Object.hasOwn(current.places, root) ? current.places[root] : undefined;
      const entry = compactEntry(change(previous ?? {}));
      const places = Object.fromEntries(Object.entries(current.places).filter(([other]) => other !== root));
      return { ...current, places: entry ? { ...places, [root]: entry } : places };
    });
  }
}

/** The sandbox policy of a place's agents in this snapshot (`machine` when none is set). */
export function policyOf(dir: AccessDirectorySnapshot, place: Place): SandboxPolicy {
  const stored = Object.hasOwn(dir.places, place.root) ? dir.places[place.root]?.policy : undefined;
  return stored ? { ...stored, folders: stored.folders ?? [] } : MACHINE_POLICY;
}

/** The extra folders of every other place with a policy: protected from this place's agents like those places' own folders. */
export function otherPlacesFolders(dir: AccessDirectorySnapshot, place: Place): string[] {
  return Object.entries(dir.places).flatMap(([root, access]) => (root === place.root ? [] : (access.policy?.folders ?? [])));
}

function checkedPolicy(kind: string, parts: PolicyParts): SandboxPolicy {
  try {
    return checkPolicy(kind, parts);
  } catch (error) {
    if (error instanceof PolicyInputError) throw new AccessInputError(error.message);
    throw error;
  }
}

/** As the file keeps it: machine as nothing, empty lists left out. */
function storedPolicy(policy: SandboxPolicy): StoredPolicy | undefined {
  if (policy.kind === 'machine') return undefined;
  const { kind, folders, ...rest } = policy;
  return { kind, ...(folders.length && { folders }), ...rest };
}

function placeOfRoot(root: string): Place {
  try {
    return placeFromRoot(root);
  } catch (error) {
    if (error instanceof PlacePathError) throw new AccessInputError(error.message);
    throw error;
  }
}

function checkUserId(id: string): void {
  const problem = userIdProblem(id);
  if (problem) throw new AccessInputError(`The user id ${JSON.stringify(id)} ${problem}.`);
}

function uniqueUserIds(ids: readonly string[] = []): string[] {
  ids.forEach(checkUserId);
  return [...new Set(ids)];
}

/** The entry with only its non-empty lists and its policy, or nothing if nothing is left. */
function compactEntry(access: PlaceAccess): PlaceAccess | undefined {
  const entry: { -readonly [K in keyof PlaceAccess]: PlaceAccess[K] } = {};
  if (access.editors?.length) entry.editors = access.editors;
  if (access.readers?.length) entry.readers = access.readers;
  if (access.policy) entry.policy = access.policy;
  if (access.toolSearch) entry.toolSearch = access.toolSearch;
  return Object.keys(entry).length ? entry : undefined;
}
