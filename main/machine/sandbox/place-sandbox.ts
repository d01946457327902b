import { lstatSync, readdirSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { AccessDirectorySnapshot } from '../../places/access-directory.js';
import type { PolicyChange } from '../../places/policy-watch.js';
import { sealedPaths, type SealedPath } from '../../places/credential-stores.js';
import { describeNetwork, POLICY_OWNER_HINT, type SandboxPolicy } from '../../places/sandbox-policy.js';
import { configDir } from '../../settings-file.js';
import type { Launch } from '../command-runner.js';
import { MachineError } from '../errors.js';
import { howToEnter } from './bubblewrap-check.js';
import { bwrapArgs, SANDBOX_DEVICES } from './bwrap-args.js';
import { joinCommand } from './cgroups.js';
import { bridgeEnv, proxyEnv, runtimeDir, SandboxNetwork, systemNetworkMachine, type SandboxNetworkSetup } from './network-bridge.js';
import { decide, pathPlan, refusalMessage, type PathPlan } from './path-plan.js';
import { enforcerFor, type Enforcer } from './sandbox-check.js';
import { START_SCRIPT_INSIDE, startScriptFile } from './start-script.js';
import type { SandboxPool } from './sandbox-pool.js';
import type { LimitValues, SandboxLimits } from './sandbox-limits.js';
import { PRIVATE_TEMP_FOLDER, privateTempOf, sandboxBash, seatbeltLaunch } from './seatbelt-launch.js';
import { LoopbackProxy } from './seatbelt-network.js';
import { MACOS_SYSTEM_DIRS } from './seatbelt-profile.js';

/** What programs need to run under strict on Linux: mounted read-only when they exist. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/etc', '/opt'];

/** What a place's sandbox needs to know of the server beside its policy. */
export interface PlaceContext {
  /** The place's saved bash outputs (its folder, made already): readable inside, at the same path. */
  readonly outputs?: string;
  /** The other places' extra folders (otherPlacesFolders): out of reach like their folders. */
  readonly otherPlaceFolders?: readonly string[];
}

const OWNER_SOCKET =
  "it is a socket of the owner's programs (tmux, screen, Docker, an editor), through which a command would run outside the sandbox";

/**
 * The owner's sockets named by the app's environment or in their usual places in the home folder
 * (the temp folder and /run are hidden whole): a socket is reached through any path a command can
 * see, whatever its network, so each is sealed.
 */
export function ownerSocketsOf(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const paths = ['.docker/run', '.colima', '.rd', '.lima'].map((path) => join(home, path));
  const named: Array<string | undefined> = [
    env.TMUX?.split(',')[0],
    env.TMUX_TMPDIR,
    env.SCREENDIR,
    /^unix:\/\/(\/.+)$/.exec(env.DOCKER_HOST ?? '')?.[1],
    /^unix:(\/.+)$/.exec(env.KITTY_LISTEN_ON ?? '')?.[1],
    env.VSCODE_IPC_HOOK_CLI,
    env.VSCODE_GIT_IPC_HANDLE,
  ];
  for (const path of named) if (path && isAbsolute(path)) paths.push(path);
  return paths;
}

/** The credential stores and the owner's seals of a policy, as paths. */
function sealedPathsOf(policy: SandboxPolicy, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): SealedPath[] {
  return sealedPaths({ ...(policy.seal && { seal: policy.seal }), ...(policy.unseal && { unseal: policy.unseal }) }, env, platform);
}

/** Why a sealed path is refused: the rule, and how the owner lifts it. */
function sealWhy(seal: SealedPath, placeRoot: string): string {
  const place = placeRoot === '' ? '.' : placeRoot;
  return seal.byDefault
    ? `it is sealed by the rule "${seal.rule}" (${seal.what}); the person who runs this app can lift it for this place with "persona-mcp-workspace places unseal ${place} '${seal.rule}'"`
    : `it is sealed by the rule "${seal.rule}" (a path the owner sealed for this place); "persona-mcp-workspace places unseal ${place} '${seal.rule}'" lifts it`;
}

/** Variables a command under machine never inherits: the app's secrets and the ways to the keychain. */
const WITHHELD_ENV =
  /^(WORKSPACE_|DBUS_|GNOME_KEYRING_|SSH_AUTH_SOCK$|SSH_AGENT_PID$|GPG_AGENT_INFO$|KRB5CCNAME$|XDG_RUNTIME_DIR$|PERSONA_)/;

/**
 * The only variables of the app's environment a sandboxed command gets (place, strict): where
 * things are and how to show them, never a credential (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, an API
 * key the owner exported: the app's environment holds whatever its launcher had). What the place
 * sets (the proxy, a local server's variables from the place's secrets) comes on top.
 */
const PASSED_ENV = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'TZ',
  'TMPDIR',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'NO_COLOR',
  'FORCE_COLOR',
  'CLICOLOR',
  'COLUMNS',
  'LINES',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_DATA_DIRS',
  'XDG_CONFIG_DIRS',
  // Where toolchains are installed: version managers and build tools find their programs through them.
  'JAVA_HOME',
  'GOROOT',
  'GOPATH',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'NVM_DIR',
  'PYENV_ROOT',
  'RBENV_ROOT',
  'VOLTA_HOME',
  'BUN_INSTALL',
  'DENO_INSTALL',
]);

/** Most entries of the app's folders looked at (on every call) for hard links before giving up (and refusing). */
const HARD_LINK_SCAN_LIMIT = 5_000;
/** As the kernel's limit on links followed in one path. */
const MAX_LINK_HOPS = 40;

export interface SandboxHost {
  /** The workspace root (absolute). */
  readonly workspaceRoot: string;
  readonly stateDir: string;
  readonly skillsDir: string;
  /** The app's environment: where its config folder, keychain sockets and secrets are. */
  readonly env: NodeJS.ProcessEnv;
  /** The places' live sandboxes, that commands without a terminal are entered into; without, each command gets a sandbox of its own. */
  readonly sandboxes?: SandboxPool | undefined;
  /** The ports the app listens on (agent endpoint, control plane): the network proxy never connects to them on this machine. */
  readonly appPorts?: () => readonly number[];
  /** The platform whose sandbox is used (enforcerFor); the running one unless a test says otherwise. */
  readonly platform?: NodeJS.Platform;
  /** The folder of a place's saved bash outputs (CommandRunner.outputFolder), made if need be. */
  readonly outputsOf?: (placeRoot: string) => Promise<string>;
  /** The places' limits on this machine (its defaults, what it enforces, the places' control groups); without, none. */
  readonly limits?: SandboxLimits;
  /**
   * Resolves once what ran under an access directory older than `dir` has been ended, to the check of
   * a command of place `root` started under it, or undefined when `dir` is outdated (PolicyWatch.caughtUp).
   */
  readonly caughtUp?: (dir: AccessDirectorySnapshot, root: string) => Promise<(() => PolicyChange | undefined) | undefined>;
}

/**
 * The app's own paths, never reachable under place or strict: its state dir (secrets file and key,
 * tokens, access, audit), its config folder (settings-file.ts), and the keychain's ways in (the
 * session bus socket, the user's runtime folder, the system bus, the keyring's and SSH agent's
 * sockets; on macOS the keychain files, whose daemon the Seatbelt profile keeps out of reach too).
 */
export function appPathsOf(host: SandboxHost): string[] {
  const { env } = host;
  const platform = host.platform ?? process.platform;
  const paths = [host.stateDir, configDir(env, platform), '/run/dbus'];
  if (platform === 'darwin') paths.push(join(homedir(), 'Library', 'Keychains'));
  const uid = process.getuid?.();
  paths.push(env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : `/run/user/${uid ?? 0}`);
  for (const part of (env.DBUS_SESSION_BUS_ADDRESS ?? '').split(';')) {
    const path = /(?:^|[:,])path=([^,]+)/.exec(part)?.[1];
    if (path) paths.push(decodeURIComponent(path));
  }
  for (const name of ['GNOME_KEYRING_CONTROL', 'SSH_AUTH_SOCK'] as const) {
    const value = env[name];
    if (value && isAbsolute(value)) paths.push(value);
  }
  return paths;
}

/** The environment a command under machine gets: the app's, without its secrets and keychain addresses. */
export function machineEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && !WITHHELD_ENV.test(entry[0])),
  );
}

/** The environment a sandboxed command gets (place, strict): the harmless variables of the app's only (PASSED_ENV, and the locale's LC_*). */
export function sandboxEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && (PASSED_ENV.has(entry[0]) || /^LC_[A-Z_]+$/.test(entry[0])),
    ),
  );
}

/**
 * A place's `place` or `strict` policy on this machine now: the file tools ask it about each real
 * path, and bash runs inside the sandbox it describes (bubblewrap on Linux, Seatbelt on macOS:
 * enforcerFor). Paths are resolved once, when the sandbox is made (per call), so a folder created
 * since is taken into account.
 */
export class PlaceSandbox {
  private constructor(
    readonly plan: PathPlan,
    private readonly kinds: ReadonlyMap<string, 'dir' | 'file'>,
    private readonly env: Record<string, string>,
    /** Which folders are bound in (inode numbers): a folder replaced since needs a new live sandbox. */
    private readonly identity: string,
    private readonly sandboxes: SandboxPool | undefined,
    /** The app's own files that have other names (hard links), by device and inode; or why it cannot tell. */
    private readonly linked: LinkedAppFiles,
    /** The proxy's rules and where its socket goes; none: no network at all. */
    private readonly network: SandboxNetworkSetup | undefined,
    /** What the network reaches, in words, for explanations. */
    private readonly networkWords: string,
    private readonly enforcer: Enforcer | undefined,
    /** The temp folder of its own under Seatbelt (privateTempOf); none elsewhere. */
    private readonly privateTemp: string | undefined,
    /** The place's root (`""`: This machine). */
    readonly placeRoot: string,
    /** The start script's file (start-script.ts): run by bash before each command. */
    private readonly startScript: string,
    /** The place's limits and where they are enforced; none without SandboxHost.limits. */
    private readonly limits: { readonly values: LimitValues; readonly on: SandboxLimits } | undefined,
  ) {}

  /** The place as the CLI takes it. */
  private get placeArg(): string {
    return this.placeRoot === '' ? '.' : this.placeRoot;
  }

  /**
   * Resolved on every call, with synchronous calls: some forty local look-ups take a fraction of a
   * millisecond in one go, and several when each waits its turn in the thread pool (bench/sandbox.ts).
   */
  static open(
    policy: SandboxPolicy & { kind: 'place' | 'strict' },
    placeLabel: string,
    placeRoot: string,
    host: SandboxHost,
    context: PlaceContext = {},
  ): PlaceSandbox {
    // Made before any look-up (each is made once per call): the state dir may not exist yet.
    const startScript = startScriptFile(host.stateDir);
    const lookups = new PathLookups();
    const real = (path: string): string => realPathOf(path, lookups);
    const workspaceRoot = real(resolve(host.workspaceRoot));
    const platform = host.platform ?? process.platform;
    const enforcer = enforcerFor(platform);
    const seatbelt = enforcer === 'seatbelt';
    const appPaths = appPathsOf(host).map(real);
    const sealedPaths = [
      ...ownerSocketsOf(host.env).map((path) => ({ path: real(path), why: OWNER_SOCKET })),
      ...sealedPathsOf(policy, host.env, platform).map((seal) => ({ path: real(seal.path), why: sealWhy(seal, placeRoot) })),
    ];
    const plan = pathPlan({
      policy: { kind: policy.kind, folders: policy.folders.map(real) },
      placeLabel,
      workspaceRoot,
      placeFolder: real(resolve(host.workspaceRoot, placeRoot)),
      tempDirs: [...new Set((seatbelt ? [tmpdir(), '/private/tmp', '/private/var/tmp'] : [tmpdir(), '/tmp', '/var/tmp']).map(real))],
      appPaths,
      sealedPaths,
      socketDirs: seatbelt ? ['/private/var/run'] : ['/run'],
      otherPlaceFolders: (context.otherPlaceFolders ?? []).map(real),
      ...(context.outputs !== undefined && { outputs: real(context.outputs) }),
      systemDirs: seatbelt ? MACOS_SYSTEM_DIRS : SYSTEM_DIRS,
      skillsDir: real(resolve(host.skillsDir)),
    });
    // Place reaches any public host through the proxy; strict only the hosts listed (none: no network).
    const network: SandboxNetworkSetup | undefined =
      policy.kind === 'place' || policy.network?.length
        ? {
            rules: { kind: policy.kind, placeLabel, placeRoot, allow: policy.network ?? [] },
            machine: systemNetworkMachine(host.appPorts ?? (() => [])),
            socketRoot: join(host.stateDir, 'sandbox-network'),
          }
        : undefined;
    const kinds = new Map<string, 'dir' | 'file'>();
    const inodes: Array<[string, number | undefined]> = [];
    for (const path of [
      ...[...plan.rules, ...plan.sealed].map((rule) => rule.path),
      ...SANDBOX_DEVICES,
      ...(network ? [runtimeDir()] : []),
    ]) {
      const info = lookups.lstat(path);
      inodes.push([path, info?.ino]);
      if (info) kinds.set(path, info.isDirectory() ? 'dir' : 'file');
    }
    // Every path the sandbox mounts, by inode: one that appeared (a credential store made since),
    // went or was replaced needs a new live sandbox, whose mounts cover it.
    const identity = JSON.stringify(inodes);
    const stateDir = real(resolve(host.stateDir));
    const privateTemp = seatbelt ? privateTempOf(stateDir, plan.placeFolder) : undefined;
    // The private temp folders are the places' files, not the app's: not walked for hard links.
    const linked = linkedAppFiles(appPaths, join(stateDir, PRIVATE_TEMP_FOLDER));
    const limits = host.limits && { values: host.limits.valuesOf(policy.limits), on: host.limits };
    return new PlaceSandbox(
      plan,
      kinds,
      sandboxEnv(host.env),
      identity,
      host.sandboxes,
      linked,
      network,
      describeNetwork(policy),
      enforcer,
      privateTemp,
      placeRoot,
      startScript,
      limits,
    );
  }

  /**
   * Refuses (throws, saying which policy refused it and who can change it) what the policy does not
   * let the file tools `mode`: the real path `real`, or the open file `info` when it is a hard
   * link to one of the app's own files. The file tools call it on what they open, through
   * descriptors (main/machine/file-target.ts), so the path checked is the file used.
   */
  checkFile(requested: string, real: string, mode: 'read' | 'write', info?: Stats): void {
    const decision = decide(this.plan, real, mode);
    if (!decision.allowed) throw this.refusal(requested, real, mode, decision.why);
    if (info && !info.isDirectory() && info.nlink > 1 && (this.linked.overLimit || this.linked.inodes.has(`${info.dev}:${info.ino}`))) {
      throw this.refusal(requested, real, mode, "it is a hard link to one of the app's own files (state, settings or keychain)");
    }
  }

  /**
   * `bash -c command` in the place's folder, in the sandbox. On macOS under Seatbelt
   * (launchSeatbelt); on Linux entered into the place's live sandbox
   * (the pool's), or in a bubblewrap of its own with a terminal (a terminal cannot be given the
   * sandbox's descriptors) or without a pool. bubblewrap itself gets the clean environment too:
   * its own process is visible inside (as pid 1) and must hold nothing secret.
   */
  async launch(command: string, tty: boolean): Promise<Launch> {
    // Another name for one of the app's files may be anywhere on its file system, readable from
    // inside (a mount cannot hide a file by inode): no command runs until it is gone.
    if (this.linked.overLimit || this.linked.paths.length > 0) {
      const what = this.linked.overLimit
        ? `the app's folders hold more than ${HARD_LINK_SCAN_LIMIT} entries, too many to check for hard links to its files`
        : `the app's file ${this.linked.paths[0]} has another name (a hard link) that a command could read; find it with "find / -xdev -samefile ${this.linked.paths[0]}" and remove it`;
      throw new MachineError(
        'refused_by_policy',
        `Refused by the ${this.plan.kind} policy of ${this.plan.placeLabel}: no command runs while ${what}. ${POLICY_OWNER_HINT}`,
      );
    }
    if (this.enforcer === 'seatbelt') return this.launchSeatbelt(command);
    const tmpMb = this.limits?.on.tmpMbOf(this.limits.values);
    const runtime = {
      startScript: this.startScript,
      ...(this.network && { runtimeDir: runtimeDir() }),
      ...(tmpMb !== undefined && { tmpMb }),
    };
    const env = { ...this.env, ...(this.network && proxyEnv()), BASH_ENV: START_SCRIPT_INSIDE };
    // Every process of the place's sandboxes is in the place's control group, with its limits.
    const group = this.limits?.on.groupOf(this.placeRoot, this.plan.placeLabel, this.limits.values);
    const enter = !tty && this.sandboxes ? await howToEnter(env) : undefined;
    if (enter && this.sandboxes) {
      const args = bwrapArgs({ plan: this.plan, kinds: this.kinds, cwd: this.plan.placeFolder, newSession: true, ...runtime });
      const live = await this.sandboxes.acquire(
        this.placeRoot,
        args,
        this.network ? bridgeEnv(env) : env,
        this.identity,
        this.network,
        group,
      );
      return live.launch(command, env, enter);
    }
    const args = bwrapArgs({ plan: this.plan, kinds: this.kinds, cwd: this.plan.placeFolder, newSession: !tty, ...runtime });
    if (!this.network) return { ...joinCommand(group, 'bwrap', [...args, '--', 'bash', '-c', command]), env };
    // A sandbox of its own, with a proxy of its own: the bridge runs the command once it listens.
    const network = await SandboxNetwork.open(this.network);
    return {
      ...joinCommand(group, 'bwrap', [...args, ...network.mountArgs, '--', ...network.bridge(['bash', '-c', command])]),
      env: bridgeEnv(env),
      release: () => void network.close(),
    };
  }

  /**
   * macOS: `sandbox-exec` per call (no namespaces to build: it costs one exec and the profile's
   * compilation), with the proxy on a loopback port of its own for the call, closed when it ends.
   * With or without a terminal alike: the runner starts it in a session of its own either way.
   */
  private async launchSeatbelt(command: string): Promise<Launch> {
    if (this.privateTemp !== undefined) await mkdir(this.privateTemp, { recursive: true, mode: 0o700 });
    const input = {
      plan: this.plan,
      command,
      bash: sandboxBash(this.plan, this.env.PATH),
      env: { ...this.env, BASH_ENV: this.startScript },
      startScript: this.startScript,
      ...(this.privateTemp !== undefined && { privateTemp: this.privateTemp }),
    };
    if (!this.network) return seatbeltLaunch(input);
    const proxy = await LoopbackProxy.open(this.network.rules, this.network.machine);
    return { ...seatbeltLaunch({ ...input, proxyPort: proxy.port }), release: () => void proxy.close() };
  }

  /** One line for an agent whose sandboxed command failed: what the sandbox keeps out, and who can change it. */
  explanation(): string {
    const writable = this.plan.rules.filter((rule) => rule.access === 'rw').map((rule) => rule.path);
    return (
      `This command ran in the sandbox of the ${this.plan.kind} policy of ${this.plan.placeLabel}: it writes only in ${writable.join(', ')} and a /tmp of its own; ` +
      `the app's state, settings and keychain, the owner's credential stores (~/.ssh, cloud and registry logins, browser profiles, shell histories: "persona-mcp-workspace places seal ${this.placeArg}" lists them) and sockets, ` +
      `other places' folders, the host's processes and the app's ports are out of its reach; ` +
      `its network: ${this.networkWords} (through a proxy, set in HTTP_PROXY and HTTPS_PROXY). ${POLICY_OWNER_HINT}`
    );
  }

  private refusal(path: string, real: string, mode: 'read' | 'write', why: string): MachineError {
    const shown = real === resolve(path) ? real : `${path} (really ${real})`;
    return new MachineError('refused_by_policy', refusalMessage(this.plan, shown, mode, why));
  }
}

interface LinkedAppFiles {
  /** "dev:ino" of each. */
  readonly inodes: ReadonlySet<string>;
  readonly paths: readonly string[];
  readonly overLimit: boolean;
}

/**
 * The files under the app's own paths with more than one name: a hard link to one of them (made
 * under the machine policy, or by the person) would let a place read it. Normally none (the app
 * replaces its files by renaming), so this is a walk of a few dozen entries.
 */
function linkedAppFiles(roots: readonly string[], skipped: string): LinkedAppFiles {
  const inodes = new Set<string>();
  const paths: string[] = [];
  let seen = 0;
  const visit = (path: string): boolean => {
    if (path === skipped) return true;
    if (++seen > HARD_LINK_SCAN_LIMIT) return false;
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (!info) return true;
    if (!info.isDirectory()) {
      if (info.nlink > 1) {
        inodes.add(`${info.dev}:${info.ino}`);
        paths.push(path);
      }
      return true;
    }
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      return true; // not ours to read: nor a command's
    }
    return names.every((name) => visit(join(path, name)));
  };
  const overLimit = !roots.every(visit);
  return { inodes, paths, overLimit };
}

/**
 * The real path of `path` (absolute), whether or not it exists: the deepest existing ancestor's
 * real path (links resolved) with the rest appended. A dangling link is followed to where it
 * points, since writing through it would create its target.
 */
export function realPathOf(path: string, lookups = new PathLookups(), hops = 0): string {
  const rest: string[] = [];
  let current = path;
  for (;;) {
    // Asked first without an exception: most paths a plan names (credential stores) do not exist,
    // and a thrown error costs far more than the look-up (PlaceSandbox.open runs on every call).
    const info = lookups.lstat(current);
    if (info) {
      const real = lookups.realpath(current);
      if (real !== undefined) return rest.length ? join(real, ...rest.reverse()) : real;
      let link: string | undefined;
      try {
        link = info.isSymbolicLink() ? readlinkSync(current) : undefined;
      } catch {
        link = undefined;
      }
      if (link !== undefined) {
        if (hops >= MAX_LINK_HOPS) throw new MachineError('not_found', `Too many symbolic links in ${path}.`);
        return realPathOf(join(resolve(dirname(current), link), ...rest.reverse()), lookups, hops + 1);
      }
    }
    const parent = dirname(current);
    if (parent === current) return path;
    rest.push(basename(current));
    current = parent;
  }
}

/**
 * The file system look-ups of one resolution, each made once: a plan's paths share their
 * ancestors (the home folder), and the sandbox's identity looks at the same paths again. Made
 * afresh for each call, so a change on disk is seen by the next one.
 */
export class PathLookups {
  private readonly infos = new Map<string, Stats | undefined>();
  private readonly reals = new Map<string, string | undefined>();

  /** lstat, with nothing for a path that is not there (a missing entry, or a file where a folder was expected). */
  lstat(path: string): Stats | undefined {
    if (this.infos.has(path)) return this.infos.get(path);
    let info: Stats | undefined;
    try {
      info = lstatSync(path, { throwIfNoEntry: false });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
    }
    this.infos.set(path, info);
    return info;
  }

  /** The real path of an existing path; nothing when it is gone or a dangling link. */
  realpath(path: string): string | undefined {
    if (this.reals.has(path)) return this.reals.get(path);
    let real: string | undefined;
    try {
      real = realpathSync.native(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    this.reals.set(path, real);
    return real;
  }
}

/** Why a sandbox cannot be used, for refusals: the reason and what to do. */
export function sandboxMissing(reason: string): MachineError {
  return new MachineError(
    'sandbox_unavailable',
    `${reason} Until then, agents of places with the place or strict policy are refused. ${POLICY_OWNER_HINT}`,
  );
}
