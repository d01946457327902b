import { depth, type PathPlan, type PathRule } from './path-plan.js';

/**
 * What programs need to run on macOS, read-only under strict: the system, its command-line tools
 * and libraries (the dyld shared cache is under /System), the developer tools that /usr/bin's
 * shims (git, clang, make) hand over to, /bin/sh's choice of shell (/private/var/select), the
 * system's settings files and time zones, and installed tools (/opt: Homebrew, MacPorts). Real
 * paths: Seatbelt matches the path after links are resolved (/etc is /private/etc). Not the
 * whole /Library: /Library/Keychains is there.
 */
export const MACOS_SYSTEM_DIRS = [
  '/System',
  '/usr',
  '/bin',
  '/sbin',
  '/opt',
  '/Applications',
  '/Library/Apple',
  '/Library/Developer',
  '/Library/Frameworks',
  '/private/etc',
  '/private/var/db/dyld',
  '/private/var/db/timezone',
  '/private/var/db/xcode_select_link',
  '/private/var/select',
];

/**
 * The Mach services a sandboxed command may look up: user and group names (id, ls -l), logging,
 * notifications, the per-user temp and cache folders, Launch Services' read-only database. Every
 * other service is out of reach, among them the keychain (com.apple.SecurityServer, securityd,
 * secd), preferences (cfprefsd reads any app's settings), DNS (mDNSResponder: names are resolved
 * by the proxy, as on Linux), and trustd (it fetches revocation lists itself, past the proxy).
 */
export const MACH_SERVICES = [
  'com.apple.system.opendirectoryd.libinfo',
  'com.apple.system.opendirectoryd.membership',
  'com.apple.system.logger',
  'com.apple.logd',
  'com.apple.system.notification_center',
  'com.apple.bsd.dirhelper',
  'com.apple.lsd.mapdb',
];

/**
 * The system information a command may read: the hardware and the OS's names and limits. Not
 * every sysctl: kern.procargs2 hands out other processes' arguments and environment (the app's
 * included), as /proc/<pid>/environ does on Linux.
 */
const SYSCTL_NAMES = [
  'kern.ostype',
  'kern.osrelease',
  'kern.osversion',
  'kern.osproductversion',
  'kern.osvariant_status',
  'kern.version',
  'kern.hostname',
  'kern.argmax',
  'kern.maxfiles',
  'kern.maxfilesperproc',
  'kern.maxproc',
  'kern.ngroups',
  'kern.usrstack64',
  'kern.secure_kernel',
  'kern.boottime',
  'kern.tcsm_available',
  'kern.tcsm_enable',
  'machdep.ptrauth_enabled',
  'sysctl.proc_cputype',
  'vm.loadavg',
];
const SYSCTL_PREFIXES = ['hw.', 'machdep.cpu.'];

/** Device nodes a command uses (the null device, randomness, its own terminal and descriptors). */
const DEVICES = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/tty', '/dev/dtracehelper'];
/** The root's links into /private: readable as links, so that paths through them resolve. */
const ROOT_LINKS = ['/etc', '/tmp', '/var'];

export interface SeatbeltInput {
  readonly plan: PathPlan;
  /**
   * With network: the loopback port of this sandbox's proxy (macOS has no network namespace, so
   * the proxy listens on the host's loopback and the profile lets only that port be reached).
   */
  readonly proxyPort?: number;
  /**
   * Strict's temp folder of its own (seatbelt-launch.ts): Seatbelt cannot mount an empty folder
   * over the system's, so the command gets a private folder instead (in TMPDIR), inside the
   * app's sealed state dir, where no other place reaches.
   */
  readonly privateTemp?: string;
  /** The start script's file (start-script.ts), in the sealed state dir: readable, that file only. */
  readonly startScript?: string;
}

/**
 * The macOS Seatbelt profile (SBPL, for `sandbox-exec -p`) of a plan: the same model as the
 * bubblewrap arguments (bwrap-args.ts). Seatbelt lets the last matching rule win, so rules are
 * written outer paths first, the app's sealed paths after them, then the few exceptions that must
 * win over everything. It never grants `file-link` nor `file-clone` (so `(deny default)` refuses
 * both everywhere): a hard link or a clone of a sealed file into a writable folder would be a path
 * the rules allow, reaching the file's contents, which bubblewrap's mounts never let a command
 * name in the first place. Pure, so that its text is unit-tested on every platform; it runs only on
 * macOS (e2e/sandbox-escape-macos.test.ts).
 */
export function seatbeltProfile({ plan, proxyPort, privateTemp, startScript }: SeatbeltInput): string {
  if (proxyPort !== undefined && (!Number.isInteger(proxyPort) || proxyPort < 1 || proxyPort > 65_535))
    throw new RangeError(`${proxyPort} is not a port.`);
  const lines = [
    '(version 1)',
    '(deny default)',
    // Its own processes only: never the host's (signals, task ports, process information).
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    `(allow sysctl-read ${[...SYSCTL_NAMES.map((name) => `(sysctl-name ${quote(name)})`), ...SYSCTL_PREFIXES.map((prefix) => `(sysctl-name-prefix ${quote(prefix)})`)].join(' ')})`,
    // V8 (Node) turns this on for its threads on Intel Macs.
    '(allow sysctl-write (sysctl-name "kern.tcsm_enable"))',
    `(allow mach-lookup ${MACH_SERVICES.map((name) => `(global-name ${quote(name)})`).join(' ')})`,
    // Named shared memory and semaphores (Python's multiprocessing, compilers' job servers).
    '(allow ipc-posix-shm)',
    '(allow ipc-posix-sem)',
  ];
  lines.push(...rule({ ...plan.fallback, path: '/' }));
  const ordered = [...plan.rules].sort((a, b) => depth(a.path) - depth(b.path));
  for (const r of ordered) lines.push(...rule(r));
  // After the path rules (the root's rule and /dev's would override them); before the sealed paths.
  const devices = DEVICES.map((device) => `(literal ${quote(device)})`).join(' ');
  lines.push(
    `(allow file-read* file-write-data file-ioctl ${devices})`,
    // A command's own descriptors (/dev/fd/N, /dev/stdin: bash's process substitution).
    '(allow file-read* file-write-data (subpath "/dev/fd") (literal "/dev/stdin") (literal "/dev/stdout") (literal "/dev/stderr"))',
    // dyld reads the root; every program's path goes through it.
    '(allow file-read-metadata file-read-data (literal "/"))',
    `(allow file-read* ${ROOT_LINKS.map((link) => `(literal ${quote(link)})`).join(' ')})`,
  );
  for (const r of plan.sealed) lines.push(...rule(r));
  const reachable = [
    ...plan.rules.filter((r) => r.access === 'ro' || r.access === 'rw').map((r) => r.path),
    ...[privateTemp, startScript].filter((path) => path !== undefined),
  ];
  // Looking up a reachable path (realpath, pwd -P) stats each folder on the way: their metadata
  // only, never their contents. After the sealed paths: strict's temp folder is inside one.
  const ancestors = new Set(reachable.flatMap(ancestorsOf));
  if (ancestors.size) lines.push(`(allow file-read-metadata ${[...ancestors].map((path) => `(literal ${quote(path)})`).join(' ')})`);
  if (privateTemp !== undefined) lines.push(`(allow file-read* file-write* (subpath ${quote(privateTemp)}))`);
  if (startScript !== undefined) lines.push(`(allow file-read* (literal ${quote(startScript)}))`);
  // Nothing out of reach may be moved into reach: renaming a folder that holds a sealed or hidden
  // path (a writable temp folder holding the state dir) would take it out from under its rule.
  // bubblewrap's mounts make such a rename fail; here each folder on the way is pinned.
  const hidden = [...plan.rules.filter((r) => r.access === 'none' || r.access === 'scratch'), ...plan.sealed].map((r) => r.path);
  const pinned = new Set(hidden.flatMap(ancestorsOf));
  if (pinned.size) lines.push(`(deny file-write-unlink ${[...pinned].map((path) => `(literal ${quote(path)})`).join(' ')})`);
  lines.push('(deny network*)');
  if (proxyPort !== undefined) lines.push(`(allow network-outbound (remote ip "localhost:${proxyPort}"))`);
  return `${lines.join('\n')}\n`;
}

function rule(r: PathRule): string[] {
  const path = `(subpath ${quote(r.path)})`;
  switch (r.access) {
    case 'none':
    // Strict's temp folder: the system's is out of reach, the command has a private one instead.
    case 'scratch':
      return [`(deny file-read* file-write* ${path})`];
    case 'ro':
      return [`(allow file-read* ${path})`, `(deny file-write* ${path})`];
    case 'rw':
      return [`(allow file-read* file-write* ${path})`];
  }
}

/** The folders above `path`, the root excepted: /a/b/c gives /a, /a/b. */
export function ancestorsOf(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.slice(0, -1).map((_, index) => `/${parts.slice(0, index + 1).join('/')}`);
}

/** An SBPL string literal. */
function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
