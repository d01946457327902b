import nodePath from 'node:path';
import { isCredentialStoreName } from './credential-stores.js';
import { AllowListError, checkAllowList } from './network-allow-list.js';

/**
 * What a place's agents may reach (issue 16):
 * - `machine`: the whole machine under the app's account (the default), as the product spec
 *   (persona-mcp-workspace.md) describes;
 * - `place`: read anywhere the account can except the protected paths; write only in the place's
 *   folder, the system temp folder and the owner's extra folders;
 * - `strict`: read and write only the place's folder and the owner's extra folders, plus the system
 *   folders programs need (read-only).
 * Sandboxed commands reach the network only through the app's filtering proxy: under `place` any
 * public host, under `strict` only the hosts on the place's allow-list (none: no network at all).
 * A loopback, private or local address is reached only through a name listed exactly.
 */
export const POLICY_KINDS = ['machine', 'place', 'strict'] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

/** A place's policy as the access directory keeps it; `machine` is kept as no entry at all. */
export interface SandboxPolicy {
  readonly kind: PolicyKind;
  /** Absolute, normalized folders the owner added: readable and writable under `place` and `strict`. */
  readonly folders: readonly string[];
  /** The network allow-list (network-allow-list.ts), normalized; absent when empty. */
  readonly network?: readonly string[] | undefined;
  /** Paths sealed beyond the credential stores (absolute, or `~/...`); absent when none. */
  readonly seal?: readonly string[] | undefined;
  /** Credential stores (credential-stores.ts, by name) this place's agents may reach; absent when none. */
  readonly unseal?: readonly string[] | undefined;
  /** Limits of the place's sandboxed commands other than the machine's defaults; absent: the defaults. */
  readonly limits?: PlaceLimits | undefined;
}

/** What a place's sandboxed commands may use together; each absent one has the machine's default (place-limits.ts). */
export interface PlaceLimits {
  /** Processes and threads at once. */
  readonly processes?: number | undefined;
  /** Memory in MiB (the files in its private /tmp count too). */
  readonly memoryMb?: number | undefined;
  /** The size of its private /tmp (and of each other temp folder of its own), in MiB. */
  readonly tmpMb?: number | undefined;
}

export const LIMIT_NAMES = ['processes', 'memoryMb', 'tmpMb'] as const;

/** What a limit may be set to: enough for a shell and a few programs to start, at most what a machine could have. */
export const LIMIT_RANGES: Readonly<Record<keyof PlaceLimits, readonly [number, number]>> = {
  processes: [16, 4_194_304],
  memoryMb: [64, 64 * 1024 * 1024],
  tmpMb: [1, 64 * 1024 * 1024],
};

/** The rest of a policy beside its kind: what checkPolicy checks. */
export interface PolicyParts {
  readonly folders?: readonly string[] | undefined;
  readonly network?: readonly string[] | undefined;
  readonly seal?: readonly string[] | undefined;
  readonly unseal?: readonly string[] | undefined;
  readonly limits?: PlaceLimits | undefined;
}

export const MACHINE_POLICY: SandboxPolicy = Object.freeze({ kind: 'machine', folders: Object.freeze([]) });

/** Who can change a policy, for refusals: agents read this and tell their person. */
export const POLICY_OWNER_HINT =
  'The person who runs this app can change it on the Connections page (the place header) or with "persona-mcp-workspace places policy".';

export class PolicyInputError extends Error {
  override readonly name = 'PolicyInputError';
}

const MAX_FOLDERS = 50;
const MAX_SEALS = 100;

export function isPolicyKind(value: string): value is PolicyKind {
  return (POLICY_KINDS as readonly string[]).includes(value);
}

/** The command that changes a place's network allow-list, for refusals. */
export function networkCommandLine(placeRoot: string): string {
  return `persona-mcp-workspace places network ${placeRoot === '' ? '.' : placeRoot} off|HOST...`;
}

/**
 * Checks and normalizes a policy given by a person: a known kind, absolute folders, no duplicates,
 * host names on the network allow-list, sealed paths absolute (or in the home folder, `~/...`),
 * lifted seals naming credential stores, limits in range. Under `machine` only the kind: it
 * reaches everything.
 */
export function checkPolicy(kind: string, parts: PolicyParts = {}): SandboxPolicy {
  if (!isPolicyKind(kind)) throw new PolicyInputError(`"${kind}" is not a policy: use machine, place or strict.`);
  const { folders = [], network = [], seal = [], unseal = [], limits = {} } = parts;
  if (kind === 'machine') {
    if (folders.length > 0)
      throw new PolicyInputError('Extra folders go with the place or strict policy; machine already reaches every folder.');
    if (network.length > 0)
      throw new PolicyInputError('A network allow-list goes with the place or strict policy; machine already reaches every host.');
    if (seal.length > 0 || unseal.length > 0)
      throw new PolicyInputError('Sealed paths go with the place or strict policy; machine reaches every path.');
    if (Object.keys(limits).length > 0)
      throw new PolicyInputError('Limits go with the place or strict policy; machine runs commands outside any sandbox.');
  }
  if (folders.length > MAX_FOLDERS) throw new PolicyInputError(`At most ${MAX_FOLDERS} extra folders.`);
  const normalized = folders.map((folder) => {
    const clean = absolutePath(folder, 'folder');
    if (clean === nodePath.parse(clean).root)
      throw new PolicyInputError('The root folder cannot be an extra folder: choose the machine policy instead.');
    return clean;
  });
  let hosts: string[];
  try {
    hosts = checkAllowList(network);
  } catch (error) {
    if (error instanceof AllowListError) throw new PolicyInputError(error.message);
    throw error;
  }
  if (seal.length > MAX_SEALS) throw new PolicyInputError(`At most ${MAX_SEALS} sealed paths.`);
  const sealed = seal.map((path) => {
    if (path === '~' || path.startsWith('~/')) {
      if (path.includes('\0')) throw new PolicyInputError('A path must not contain a NUL character.');
      const rest = nodePath.posix.normalize(path.slice(1) || '/');
      return rest === '/' ? '~' : `~${rest.replace(/\/$/, '')}`;
    }
    const clean = absolutePath(path, 'sealed path');
    if (clean === nodePath.parse(clean).root)
      throw new PolicyInputError('The root folder cannot be sealed: choose the strict policy, which reaches only the place.');
    return clean;
  });
  for (const name of unseal) {
    if (!isCredentialStoreName(name))
      throw new PolicyInputError(
        `"${name}" is not one of the sealed credential stores: see "persona-mcp-workspace places seal PLACE" for their names.`,
      );
  }
  const checkedLimits: { -readonly [K in keyof PlaceLimits]: number } = {};
  for (const [name, value] of Object.entries(limits) as Array<[keyof PlaceLimits, unknown]>) {
    const range = Object.hasOwn(LIMIT_RANGES, name) ? LIMIT_RANGES[name] : undefined;
    if (!range) throw new PolicyInputError(`"${name}" is not a limit: use ${LIMIT_NAMES.join(', ')}.`);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < range[0] || value > range[1]) {
      throw new PolicyInputError(`The ${name} limit must be a whole number from ${range[0]} to ${range[1]} (got ${String(value)}).`);
    }
    checkedLimits[name] = value;
  }
  return {
    kind,
    folders: [...new Set(normalized)],
    ...(hosts.length > 0 && { network: hosts }),
    ...(sealed.length > 0 && { seal: [...new Set(sealed)] }),
    ...(unseal.length > 0 && { unseal: [...new Set(unseal)] }),
    ...(Object.keys(checkedLimits).length > 0 && { limits: checkedLimits }),
  };
}

function absolutePath(path: string, what: string): string {
  if (path.includes('\0')) throw new PolicyInputError(`A ${what} must not contain a NUL character.`);
  if (!nodePath.isAbsolute(path)) throw new PolicyInputError(`The ${what} ${JSON.stringify(path)} must be an absolute path.`);
  return nodePath.resolve(path);
}

/** One line for people: "strict (+ 2 folders)". */
export function describePolicy(policy: SandboxPolicy): string {
  const extra = policy.folders.length ? ` (+ ${policy.folders.length} folder${policy.folders.length === 1 ? '' : 's'})` : '';
  return `${policy.kind}${extra}`;
}

/** What the policy's sandboxed commands reach on the network, in words. */
export function describeNetwork(policy: SandboxPolicy): string {
  const listed = policy.network ?? [];
  switch (policy.kind) {
    case 'machine':
      return 'the whole network, as this app';
    case 'place':
      return listed.length ? `any public host, and ${listed.join(', ')}` : 'any public host';
    case 'strict':
      return listed.length ? `only ${listed.join(', ')}` : 'no network';
  }
}
