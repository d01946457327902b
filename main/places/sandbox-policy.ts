import nodePath from 'node:path';

/**
 * What a place's agents may reach (issue 16):
 * - `machine`: the whole machine under the app's account, as the spec describes (the default);
 * - `place`: read anywhere the account can except the protected paths; write only in the place's
 *   folder, the system temp folder and the owner's extra folders;
 * - `strict`: read and write only the place's folder and the owner's extra folders, plus the system
 *   folders programs need (read-only); no network.
 */
export const POLICY_KINDS = ['machine', 'place', 'strict'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

/** A place's policy as the access directory keeps it; `machine` is kept as no entry at all. */
export interface SandboxPolicy {
  readonly kind: PolicyKind;
  /** Absolute, normalized folders the owner added: readable and writable under `place` and `strict`. */
  readonly folders: readonly string[];
}

export const MACHINE_POLICY: SandboxPolicy = Object.freeze({ kind: 'machine', folders: Object.freeze([]) });

/** Who can change a policy, for refusals: agents read this and tell their person. */
export const POLICY_OWNER_HINT =
  'The person who runs this app can change it on the Connections page (the place header) or with "persona-mcp-workspace places policy".';

export class PolicyInputError extends Error {
  override readonly name = 'PolicyInputError';
}

const MAX_FOLDERS = 50;

export function isPolicyKind(value: string): value is PolicyKind {
  return (POLICY_KINDS as readonly string[]).includes(value);
}

/** Checks and normalizes a policy given by a person: a known kind, absolute folders, no duplicates. */
export function checkPolicy(kind: string, folders: readonly string[] = []): SandboxPolicy {
  if (!isPolicyKind(kind)) throw new PolicyInputError(`"${kind}" is not a policy: use machine, place or strict.`);
  if (kind === 'machine' && folders.length > 0) {
    throw new PolicyInputError('Extra folders go with the place or strict policy; machine already reaches every folder.');
  }
  if (folders.length > MAX_FOLDERS) throw new PolicyInputError(`At most ${MAX_FOLDERS} extra folders.`);
  const normalized = folders.map((folder) => {
    if (folder.includes('\0')) throw new PolicyInputError('A folder must not contain a NUL character.');
    if (!nodePath.isAbsolute(folder)) throw new PolicyInputError(`The folder ${JSON.stringify(folder)} must be an absolute path.`);
    const clean = nodePath.resolve(folder);
    if (clean === nodePath.parse(clean).root) throw new PolicyInputError('The root folder cannot be an extra folder: choose the machine policy instead.');
    return clean;
  });
  return { kind, folders: [...new Set(normalized)] };
}

/** One line for people: "strict (+ 2 folders)". */
export function describePolicy(policy: SandboxPolicy): string {
  const extra = policy.folders.length ? ` (+ ${policy.folders.length} folder${policy.folders.length === 1 ? '' : 's'})` : '';
  return `${policy.kind}${extra}`;
}
