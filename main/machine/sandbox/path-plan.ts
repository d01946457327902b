import { posix } from 'node:path';
import { POLICY_OWNER_HINT, type SandboxPolicy } from '../../places/sandbox-policy.js';

/**
 * What a policy lets an agent do at a path: nothing, read, read and write, or (strict's temp folder)
 * use a private empty folder of its own that the file tools do not reach.
 */
export type PathAccess = 'none' | 'ro' | 'rw' | 'scratch';

export interface PathRule {
  /** Absolute and real (symbolic links already resolved). */
  readonly path: string;
  readonly access: PathAccess;
  /** Why, for a refusal: "it is another place's folder". */
  readonly why: string;
}

/**
 * A `place` or `strict` policy applied to one place, as paths: the deepest rule naming a path
 * decides, `sealed` paths are out of reach whatever the rules say. The file tools check paths
 * against it, and the bash sandbox mounts it, so both see the same machine.
 */
export interface PathPlan {
  readonly kind: 'place' | 'strict';
  readonly placeLabel: string;
  readonly placeFolder: string;
  /** Access to a path no rule names. */
  readonly fallback: PathRule;
  readonly rules: readonly PathRule[];
  readonly sealed: readonly PathRule[];
}

export interface PlanInput {
  readonly policy: SandboxPolicy & { kind: 'place' | 'strict' };
  readonly placeLabel: string;
  /** All paths absolute and real. */
  readonly workspaceRoot: string;
  readonly placeFolder: string;
  /**
   * The system's temp folders (Linux: /tmp, /var/tmp and TMPDIR; macOS: the user's temp folder and
   * /private/tmp): the sandbox has a private one of its own instead, so none of the owner's
   * sockets and other users' files there is in reach.
   */
  readonly tempDirs: readonly string[];
  /** The app's state dir, config dir, keychain sockets: never reached under place or strict. */
  readonly appPaths: readonly string[];
  /** Further sealed paths and why (credential stores, the owner's seals, the owner's sockets). */
  readonly sealedPaths?: readonly { readonly path: string; readonly why: string }[];
  /** Folders of the running system's sockets (/run): hidden, a socket is reached through any path a command can see. */
  readonly socketDirs?: readonly string[];
  /** The extra folders of the other places: protected like their folders. */
  readonly otherPlaceFolders?: readonly string[];
  /** The place's saved bash outputs (saved-outputs.ts): readable, at the path the answers name. */
  readonly outputs?: string;
  /** What programs need to run, read-only under strict (/usr, /etc, ...). */
  readonly systemDirs: readonly string[];
  /** The skills folder: read-only under both, so that skills' bundled files can be read and run. */
  readonly skillsDir: string;
}

/** The folders of the workspace root that hold places (place-root.ts); other places live there. */
export const PLACE_AREAS = ['Workflow', 'Crew', '_users'] as const;

const APP_STATE = "it is the app's own state, settings or keychain, which agents of a place never reach";
const OTHER_PLACE = "it is another place's folder";
const OTHER_PLACE_FOLDER = "it is one of another place's extra folders";
const KERNEL = "it is the host's processes or devices";
const SOCKETS = "it holds the running system's sockets, through which a command would act outside the sandbox";

export function pathPlan(input: PlanInput): PathPlan {
  const { policy, placeFolder, tempDirs } = input;
  const writable = [placeFolder, ...policy.folders];
  const writes = `the ${policy.kind} policy writes only in ${writable.join(', ')} and a temp folder of its own`;
  const rules = new Map<string, PathRule>();
  const add = (path: string, access: PathAccess, why: string): void => void rules.set(path, { path, access, why });

  let fallback: PathRule;
  if (policy.kind === 'place') {
    fallback = { path: '/', access: 'ro', why: writes };
    // The workspace may be under the temp folder (tests, scratch checkouts): it stays read-only.
    add(input.workspaceRoot, 'ro', writes);
  } else {
    fallback = {
      path: '/',
      access: 'none',
      why: `the strict policy reaches only ${[placeFolder, ...policy.folders].join(', ')} and the system folders`,
    };
    for (const dir of input.systemDirs) add(dir, 'ro', writes);
    // Out of reach anyway, but said outright: the workspace may be under the temp folder.
    add(input.workspaceRoot, 'none', fallback.why);
  }
  // A workspace that is a temp folder itself keeps its rule.
  for (const dir of tempDirs) {
    if (!rules.has(dir))
      add(
        dir,
        'scratch',
        `under the ${policy.kind} policy the place's sandbox has a temp folder of its own, which the file tools do not reach`,
      );
  }
  add('/proc', 'none', KERNEL);
  add('/dev', 'none', KERNEL);
  for (const dir of input.socketDirs ?? []) add(dir, 'none', SOCKETS);
  for (const area of PLACE_AREAS) add(posix.join(input.workspaceRoot, area), 'none', OTHER_PLACE);
  for (const folder of input.otherPlaceFolders ?? []) add(folder, 'none', OTHER_PLACE_FOLDER);
  add(input.skillsDir, 'ro', writes);
  if (input.outputs !== undefined) add(input.outputs, 'ro', "it is the place's saved bash outputs, which its agents read but never change");
  for (const folder of [placeFolder, ...policy.folders]) add(folder, 'rw', writes);

  const sealed = [
    ...input.appPaths.map((path) => ({ path, access: 'none' as const, why: APP_STATE })),
    ...(input.sealedPaths ?? []).map(({ path, why }) => ({ path, access: 'none' as const, why })),
  ];
  return { kind: policy.kind, placeLabel: input.placeLabel, placeFolder, fallback, rules: [...rules.values()], sealed };
}

export type Decision = { allowed: true } | { allowed: false; why: string };

/** Whether `path` (absolute and real) may be read or written under the plan. */
export function decide(plan: PathPlan, path: string, mode: 'read' | 'write'): Decision {
  const seal = plan.sealed.find((rule) => isInside(path, rule.path));
  if (seal) return { allowed: false, why: seal.why };
  const rule = deepestRule(plan, path);
  if (rule.access === 'rw' || (rule.access === 'ro' && mode === 'read')) return { allowed: true };
  return { allowed: false, why: rule.why };
}

/** The rule that decides for `path`: the deepest one containing it, else the fallback. */
export function deepestRule(plan: PathPlan, path: string): PathRule {
  let best: PathRule = plan.fallback;
  for (const rule of plan.rules) {
    if (isInside(path, rule.path) && depth(rule.path) >= depth(best.path)) best = rule;
  }
  return best;
}

/** What an agent reads when the plan refuses a path: which policy, why, and who can change it. */
export function refusalMessage(plan: PathPlan, path: string, mode: 'read' | 'write', why: string): string {
  return `Refused by the ${plan.kind} policy of ${plan.placeLabel}: cannot ${mode} ${path}, because ${why}. ${POLICY_OWNER_HINT}`;
}

export function isInside(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

export function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}
