import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Control groups for the places' sandboxed commands (Linux): one group per place, below a folder
 * this server made and owns, holding every process of the place's sandboxes (the live ones, a
 * terminal's, a local server's). Its limits are the kernel's: `pids.max` (processes and threads),
 * the memory limit (files in the sandbox's tmpfs count, as the kernel charges them to their writer),
 * and a CPU group of its own where the cpu controller is there (the place's processes together
 * weigh as one process against the server's: a fork bomb cannot starve it).
 *
 * Found once at start (`openCgroups`), in this order:
 * - **cgroup v2** with controllers (systemd desktops and servers): a transient scope made by
 *   `systemd-run [--user] --scope -p Delegate=yes`, which systemd hands to this app's user; a
 *   holder process keeps it up in a leaf of its own, so the scope may enable its controllers for
 *   the places' groups below it.
 * - **cgroup v1** (older systems, and hybrid ones whose v2 tree has no controllers): a folder below
 *   this process's own group in each of the pids, memory and cpu hierarchies, where it may write
 *   there (as root, or where the owner delegated them).
 * Either way a command is put in its place's group by the process itself before anything of the
 * place runs: `/bin/sh` writes its own pid into each group's `cgroup.procs`, then execs the launcher
 * (`joinCommand`). A trial of exactly that decides whether limits are enforced; when they cannot
 * be, `why` says so and the sandbox works without them.
 */

export type Controller = 'pids' | 'memory' | 'cpu';

/** What a place's group is given: processes at once, memory in bytes. */
export interface GroupLimits {
  readonly processes: number;
  readonly memoryBytes: number;
}

/** The files a process writes its pid into to join a place's group (one per hierarchy). */
export interface PlaceGroup {
  readonly procs: readonly string[];
}

/** Where this server's groups live: one folder per hierarchy, with the controllers it has there. */
interface Hierarchy {
  readonly version: 1 | 2;
  /** This server's folder (made on first use, removed at close). */
  readonly base: string;
  readonly controllers: ReadonlySet<Controller>;
}

/** Prefix of this server's folders, followed by its pid (so that a later start can tell whether it still runs). */
export const GROUP_PREFIX = 'persona-mcp-workspace-';

export type CgroupsFound = { cgroups: PlaceCgroups; how: string } | { cgroups?: undefined; why: string };

/** The /proc files read to find the hierarchies (tests give their own). */
export interface ProcFiles {
  readonly cgroup: string;
  readonly mountinfo: string;
}

/**
 * The place groups of this server, made below `base` in each hierarchy. Each place's group is made
 * when its first sandbox starts and kept (empty between commands) until the server stops.
 */
export class PlaceCgroups {
  private readonly written = new Map<string, string>();

  constructor(
    private readonly hierarchies: readonly Hierarchy[],
    /** The process keeping a systemd scope up (cgroup v2), ended at close. */
    private readonly holder?: ChildProcess,
  ) {}

  /** The controllers the groups have, across hierarchies. */
  get controllers(): ReadonlySet<Controller> {
    return new Set(this.hierarchies.flatMap((h) => [...h.controllers]));
  }

  /** Where the groups are, for people: one folder per hierarchy. */
  get folders(): string[] {
    return this.hierarchies.map((h) => h.base);
  }

  /**
   * The group of the place `root`, made if need be and given `limits` (written again only when
   * they changed, or the group was removed meanwhile). Throws when the kernel refuses a limit
   * (a memory limit below what the place's processes use now).
   */
  groupOf(root: string, limits: GroupLimits): PlaceGroup {
    const name = placeGroupName(root);
    const dirs = this.hierarchies.map((h) => join(h.base, name));
    const wanted = JSON.stringify(limits);
    if (this.written.get(name) !== wanted || !dirs.every((dir) => existsSync(dir))) {
      for (const h of this.hierarchies) writeLimits(h, join(h.base, name), limits);
      this.written.set(name, wanted);
    }
    return { procs: dirs.map((dir) => join(dir, 'cgroup.procs')) };
  }

  /** Ends whatever is left in the groups (the sandboxes have been ended before) and removes them, then the holder. */
  async close(): Promise<void> {
    for (const h of this.hierarchies) {
      if (!existsSync(h.base)) continue;
      for (const name of readdirSync(h.base, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)) {
        if (name === HOLDER_LEAF) continue;
        await emptyGroup(h, join(h.base, name));
        removeGroup(join(h.base, name));
      }
      if (h.version === 1) removeGroup(h.base);
    }
    this.written.clear();
    if (this.holder && this.holder.exitCode === null && this.holder.signalCode === null) {
      this.holder.kill('SIGKILL');
      await once(this.holder, 'exit');
    }
  }
}

/**
 * `file args` started inside `group`: `/bin/sh` writes its own pid into the group's `cgroup.procs`
 * files, then execs the launcher, so nothing of the place ever runs outside it. Without a group,
 * the launcher as it is.
 */
export function joinCommand(group: PlaceGroup | undefined, file: string, args: readonly string[]): { file: string; args: string[] } {
  if (!group || group.procs.length === 0) return { file, args: [...args] };
  const count = group.procs.length;
  const writes = group.procs.map((_, i) => `echo $$ >"$${i + 1}"`).join(' && ');
  const script = `${writes} || { echo "The place's limits could not be applied (its control group is gone): run the command again." >&2; exit 126; }; shift ${count}; exec "$@"`;
  return { file: '/bin/sh', args: ['-c', script, 'sh', ...group.procs, file, ...args] };
}

/** A place's group's folder name: from its root, so that the same place always gets the same group. */
export function placeGroupName(root: string): string {
  return `place-${createHash('sha256').update(`place:${root}`).digest('hex').slice(0, 16)}`;
}

/** The leaf the systemd scope's holder process sits in (v2: a group with children holds no process). */
const HOLDER_LEAF = 'holder';

function writeLimits(h: Hierarchy, dir: string, limits: GroupLimits): void {
  mkdirSync(dir, { recursive: true });
  const files: Array<[string, string]> = [];
  if (h.controllers.has('pids')) files.push(['pids.max', String(limits.processes)]);
  if (h.controllers.has('memory')) files.push([h.version === 1 ? 'memory.limit_in_bytes' : 'memory.max', String(limits.memoryBytes)]);
  for (const [file, value] of files) {
    try {
      writeFileSync(join(dir, file), value);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(
        `could not set ${file} of ${dir} to ${value} (${code ?? (error as Error).message})${code === 'EBUSY' ? ': the place uses more than that now' : ''}`,
      );
    }
  }
}

/** SIGKILL to every process left in the group (v2: cgroup.kill), then waits until it is empty, for at most a second. */
async function emptyGroup(h: Hierarchy, dir: string): Promise<void> {
  const procs = (): number[] => {
    try {
      return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  for (let i = 0; i < 20 && procs().length > 0; i++) {
    if (h.version === 2 && existsSync(join(dir, 'cgroup.kill'))) writeFileSync(join(dir, 'cgroup.kill'), '1');
    else
      for (const pid of procs()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    await sleep(50);
  }
}

/** rmdir of a group: the kernel refuses while a process or a child group is in it, which leaves it be. */
function removeGroup(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Still in use (the kernel refuses), or gone.
  }
}

/** Octal escapes of /proc/self/mountinfo (`\040` for a space) decoded. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

interface CgroupMount {
  readonly version: 1 | 2;
  /** The mount's root in the hierarchy, and where it is mounted. */
  readonly root: string;
  readonly mountPoint: string;
  /** v1: the controllers it carries. */
  readonly controllers: readonly string[];
}

/** The cgroup mounts of /proc/self/mountinfo. */
export function cgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    mounts.push({
      version: fsType === 'cgroup2' ? 2 : 1,
      root: unescapeMount(fields[3] ?? '/'),
      mountPoint: unescapeMount(fields[4] ?? ''),
      controllers: fsType === 'cgroup' ? superOptions.split(',') : [],
    });
  }
  return mounts;
}

/** This process's group in each hierarchy of /proc/self/cgroup: by controller (v1), and `''` for v2. */
export function ownGroups(cgroup: string): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of cgroup.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, controllers = '', path = '/'] = match;
    if (controllers === '') groups.set('', path);
    else for (const controller of controllers.split(',')) groups.set(controller, path);
  }
  return groups;
}

/** Where a group is in the file system: its path below the mount's root. */
function folderOf(mount: CgroupMount, path: string): string | undefined {
  const root = mount.root === '/' ? '' : mount.root;
  if (root && path !== root && !path.startsWith(`${root}/`)) return undefined; // outside what is mounted
  return join(mount.mountPoint, path.slice(root.length));
}

const CONTROLLERS: readonly Controller[] = ['pids', 'memory', 'cpu'];

/**
 * The v1 hierarchies this process may make groups in: its own group's folder in the pids, memory
 * and cpu hierarchies, where the folder is writable (a folder is made and removed to tell).
 */
export function v1Hierarchies(files: ProcFiles, serverId: string): Hierarchy[] {
  const own = ownGroups(files.cgroup);
  const found: Hierarchy[] = [];
  for (const mount of cgroupMounts(files.mountinfo).filter((m) => m.version === 1)) {
    const controllers = CONTROLLERS.filter((c) => mount.controllers.includes(c));
    const path = controllers.map((c) => own.get(c)).find((p) => p !== undefined);
    if (controllers.length === 0 || path === undefined) continue;
    const folder = folderOf(mount, path);
    if (!folder) continue;
    const base = join(folder, `${GROUP_PREFIX}${serverId}`);
    try {
      mkdirSync(base);
      rmdirSync(base);
    } catch {
      continue;
    }
    found.push({ version: 1, base, controllers: new Set(controllers) });
  }
  return found;
}

/** Removes the folders of servers that no longer run (a crash, a kill): empty groups only, as the kernel allows. */
export function sweepStaleGroups(parents: readonly string[]): void {
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = Number(/^persona-mcp-workspace-(\d+)-/.exec(name)?.[1]);
      if (!pid || isRunning(pid)) continue;
      const dir = join(parent, name);
      try {
        for (const child of readdirSync(dir, { withFileTypes: true })) if (child.isDirectory()) removeGroup(join(dir, child.name));
      } catch {
        continue;
      }
      removeGroup(dir);
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `true` joined to a trial group, as every command will be: whether joining works here. */
async function tryJoining(hierarchies: readonly Hierarchy[]): Promise<string | undefined> {
  const trial = `trial-${randomBytes(4).toString('hex')}`;
  try {
    const dirs = hierarchies.map((h) => {
      const dir = join(h.base, trial);
      mkdirSync(dir, { recursive: true });
      return dir;
    });
    const { file, args } = joinCommand({ procs: dirs.map((dir) => join(dir, 'cgroup.procs')) }, 'true', []);
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const [code] = (await once(child, 'close')) as [number | null];
    return code === 0 ? undefined : stderr.trim().split('\n')[0] || `exit code ${code}`;
  } catch (error) {
    return (error as Error).message;
  } finally {
    for (const h of hierarchies) removeGroup(join(h.base, trial));
  }
}

/**
 * cgroup v2: a transient systemd scope delegated to this app's user (`--user` unless root), kept
 * up by a holder process moved into a leaf of its own, with the controllers it has enabled for
 * the groups below.
 */
async function systemdScope(
  serverId: string,
  env: NodeJS.ProcessEnv,
): Promise<{ hierarchy: Hierarchy; holder: ChildProcess } | { why: string }> {
  const user = process.getuid?.() !== 0;
  const unit = `${GROUP_PREFIX}${serverId}.scope`;
  const holder = spawn(
    'systemd-run',
    [...(user ? ['--user'] : []), '--scope', '--quiet', '--collect', `--unit=${unit}`, '-p', 'Delegate=yes', '--', 'sleep', 'infinity'],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  holder.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const failed = (why: string) => {
    holder.kill('SIGKILL');
    return { why };
  };
  try {
    await once(holder, 'spawn');
  } catch (error) {
    return { why: `systemd-run could not be started (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  // systemd-run execs sleep once the scope is made: until then /proc shows systemd-run itself.
  const deadline = Date.now() + 5000;
  let path: string | undefined;
  while (Date.now() < deadline && holder.exitCode === null) {
    const comm = readFileSync(`/proc/${holder.pid}/comm`, 'utf8').trim();
    if (comm === 'sleep') {
      path = ownGroups(readFileSync(`/proc/${holder.pid}/cgroup`, 'utf8')).get('');
      break;
    }
    await sleep(10);
  }
  if (!path) return failed(`systemd-run did not make a scope: ${stderr.trim().split('\n')[0] || 'no message'}`);
  const mount = cgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8')).find((m) => m.version === 2);
  const scope = mount && folderOf(mount, path);
  if (!scope || !path.endsWith(`/${unit}`)) return failed(`the scope systemd made is not where it was expected (${path})`);
  try {
    const leaf = join(scope, HOLDER_LEAF);
    mkdirSync(leaf);
    writeFileSync(join(leaf, 'cgroup.procs'), String(holder.pid));
    const available = readFileSync(join(scope, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    const controllers = CONTROLLERS.filter((c) => available.includes(c));
    writeFileSync(join(scope, 'cgroup.subtree_control'), controllers.map((c) => `+${c}`).join(' '));
    return { hierarchy: { version: 2, base: scope, controllers: new Set(controllers) }, holder };
  } catch (error) {
    return failed(
      `the delegated scope ${scope} could not be set up (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

/** Finds how this machine can put the places' commands in groups of their own (see the top of this file). */
export async function openCgroups(env: NodeJS.ProcessEnv = process.env, files?: ProcFiles): Promise<CgroupsFound> {
  if (process.platform !== 'linux') return { why: `${process.platform} has no control groups` };
  let proc: ProcFiles;
  try {
    proc = files ?? { cgroup: readFileSync('/proc/self/cgroup', 'utf8'), mountinfo: readFileSync('/proc/self/mountinfo', 'utf8') };
  } catch (error) {
    return { why: `/proc cannot be read (${(error as Error).message})` };
  }
  const serverId = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const mounts = cgroupMounts(proc.mountinfo);
  const unified = mounts.find((m) => m.version === 2);
  const unifiedControllers = unified ? (readFirstLine(join(unified.mountPoint, 'cgroup.controllers')) ?? '').split(/\s+/) : [];
  if (unified && CONTROLLERS.some((c) => unifiedControllers.includes(c))) {
    const scope = await systemdScope(serverId, env);
    if ('why' in scope) return { why: `cgroup v2: ${scope.why}` };
    const problem = await tryJoining([scope.hierarchy]);
    const cgroups = new PlaceCgroups([scope.hierarchy], scope.holder);
    if (problem) {
      await cgroups.close();
      return {
        why: `cgroup v2: a command cannot join the delegated scope (${problem}); start this app from your desktop session (systemd's user manager)`,
      };
    }
    return { cgroups, how: `cgroup v2, a systemd scope delegated to this app (${scope.hierarchy.base})` };
  }
  const v1 = v1Hierarchies(proc, serverId);
  sweepStaleGroups(v1.map((h) => join(h.base, '..')));
  if (!v1.some((h) => h.controllers.has('pids') || h.controllers.has('memory'))) {
    return {
      why: unified
        ? 'cgroup v2 has no controllers here, and no cgroup v1 hierarchy of pids or memory is writable by this user'
        : 'no cgroup hierarchy of pids or memory is writable by this user',
    };
  }
  const problem = await tryJoining(v1);
  if (problem) {
    for (const h of v1) removeGroup(h.base);
    return { why: `cgroup v1: a command cannot join a group (${problem})` };
  }
  return { cgroups: new PlaceCgroups(v1), how: `cgroup v1 (${v1.map((h) => h.base).join(', ')})` };
}

function readFirstLine(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').split('\n')[0];
  } catch {
    return undefined;
  }
}
