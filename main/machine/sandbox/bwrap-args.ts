import { depth, type PathPlan, type PathRule } from './path-plan.js';
import { START_SCRIPT_INSIDE } from './start-script.js';

export interface BwrapInput {
  readonly plan: PathPlan;
  /** What each rule's path is on this machine now; a path absent from the map does not exist. */
  readonly kinds: ReadonlyMap<string, 'dir' | 'file'>;
  /** Where the command starts (inside the plan's readable paths). */
  readonly cwd: string;
  /**
   * A new terminal session keeps a command from typing into the caller's terminal (TIOCSTI). A
   * command given its own pseudo-terminal (tty) keeps it as its controlling terminal instead: it can
   * only type into itself.
   */
  readonly newSession: boolean;
  /**
   * With network: the folder of the app's runtime, which the bridge to the proxy runs with
   * (network-bridge.ts); bound read-only where the plan does not show it already (strict).
   */
  readonly runtimeDir?: string;
  /** The start script's file on the host (start-script.ts), bound read-only at START_SCRIPT_INSIDE. */
  readonly startScript?: string;
  /** The size of each temp folder of the sandbox's own (/tmp, /var/tmp, /dev/shm, ...), in MiB; absent: the kernel's default (half the memory). */
  readonly tmpMb?: number;
}

/** The sandbox's /dev holds device nodes, links and mount points only: a writable tmpfs, so it is kept small. */
const DEV_BYTES = 1024 * 1024;

/** The device nodes a sandboxed command gets (when the machine has them), in a /dev of its own. */
export const SANDBOX_DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty'];

/**
 * bubblewrap's arguments (before `-- program`) that mount the plan: the machine read-only (place)
 * or only the system folders (strict), the place's folder and extra folders read-write, other
 * places' folders and the app's own paths replaced by empty ones, a fresh /proc of the command's
 * own processes, a network namespace of its own (only a loopback: the app's loopback ports are out
 * of reach; what network it gets comes through the proxy, network-bridge.ts), no capabilities.
 * The environment is the one bubblewrap is started with (it passes it on).
 */
export function bwrapArgs({ plan, kinds, cwd, newSession, runtimeDir, startScript, tmpMb }: BwrapInput): string[] {
  const args: string[] = [];
  // Each writable tmpfs is sized: the limit on the place's temp folders (its memory limit counts their files too).
  const sized = (bytes: number | undefined): string[] => (bytes === undefined ? [] : ['--size', String(bytes)]);
  const tmpBytes = tmpMb === undefined ? undefined : tmpMb * 1024 * 1024;
  if (plan.fallback.access === 'ro') args.push('--ro-bind', '/', '/');
  // A /dev of a few device nodes rather than bubblewrap's --dev: --dev mounts a devpts, which an
  // unprivileged bubblewrap can only do from a second user namespace, and a command then cannot be
  // entered into the sandbox later (live-sandbox.ts). The cost: no new pseudo-terminals inside.
  args.push(...sized(tmpMb === undefined ? undefined : DEV_BYTES), '--tmpfs', '/dev');
  for (const device of SANDBOX_DEVICES) if (kinds.get(device) === 'file') args.push('--dev-bind', device, device);
  for (const [name, fd] of [
    ['fd', ''],
    ['stdin', '/0'],
    ['stdout', '/1'],
    ['stderr', '/2'],
  ] as const)
    args.push('--symlink', `/proc/self/fd${fd}`, `/dev/${name}`);
  args.push(...sized(tmpBytes), '--tmpfs', '/dev/shm', '--proc', '/proc');
  if (startScript !== undefined) args.push('--ro-bind', startScript, START_SCRIPT_INSIDE);
  // Outer paths first, so that a deeper rule (the place's folder inside another area) wins.
  const ordered = [...plan.rules]
    .filter((rule) => rule.path !== '/proc' && rule.path !== '/dev')
    .sort((a, b) => depth(a.path) - depth(b.path));
  const covering = [...ordered, ...plan.sealed];
  for (const rule of covering) args.push(...(rule.access === 'scratch' ? sized(tmpBytes) : []), ...mount(rule, kinds.get(rule.path)));
  // Before the root is made read-only: its parent folders may have to be made in the empty root.
  if (runtimeDir !== undefined && plan.fallback.access === 'none') args.push('--ro-bind', runtimeDir, runtimeDir);
  // The empty folders covering what is out of reach are read-only, so that writing there fails
  // instead of vanishing; after every mount, since the place's folder may be mounted inside one.
  // bubblewrap's remount is not recursive: what is mounted inside keeps its own mode.
  for (const rule of covering) if (rule.access === 'none' && kinds.get(rule.path) === 'dir') args.push('--remount-ro', rule.path);
  if (plan.fallback.access === 'none') args.push('--remount-ro', '/');
  args.push(
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    ...(newSession ? ['--new-session'] : []),
    '--chdir',
    cwd,
  );
  return args;
}

function mount(rule: PathRule, kind: 'dir' | 'file' | undefined): string[] {
  if (rule.access === 'scratch') return ['--tmpfs', rule.path];
  if (kind === undefined) return [];
  switch (rule.access) {
    case 'ro':
      return ['--ro-bind', rule.path, rule.path];
    case 'rw':
      return ['--bind', rule.path, rule.path];
    case 'none':
      // A file (a key, a socket) is covered by an empty device; a folder by an empty one.
      return kind === 'dir' ? ['--tmpfs', rule.path] : ['--ro-bind', '/dev/null', rule.path];
  }
}
