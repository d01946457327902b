import { depth, type PathPlan, type PathRule } from './path-plan.js';

export interface SeatbeltInput {
  readonly plan: PathPlan;
  /**
   * With network: the loopback port of the app's proxy for this sandbox (macOS has no network
   * namespace, so the proxy listens on the host's loopback and the profile lets only it be reached).
   */
  readonly proxyPort?: number;
}

/**
 * The macOS Seatbelt profile (SBPL, for `sandbox-exec -p`) of a plan: the same model as the
 * bubblewrap arguments (bwrap-args.ts). Seatbelt lets the last matching rule win, so rules are
 * written outer paths first and the app's sealed paths last, as bubblewrap mounts them.
 *
 * Not wired in and not run here (Linux): macOS still refuses place and strict until this profile
 * has been tried on a Mac. Pure, so that its text is unit-tested.
 */
export function seatbeltProfile({ plan, proxyPort }: SeatbeltInput): string {
  const lines = [
    '(version 1)',
    '(deny default)',
    // What any program needs to start and run: its own processes, system information, Mach lookups
    // of the system's services (no keychain: its daemon is denied below by name).
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(deny mach-lookup (global-name "com.apple.SecurityServer") (global-name "com.apple.securityd"))',
    '(allow ipc-posix-shm)',
  ];
  lines.push(...rule({ ...plan.fallback, path: '/' }));
  const ordered = [...plan.rules].filter((r) => r.path !== '/dev').sort((a, b) => depth(a.path) - depth(b.path));
  for (const r of ordered) lines.push(...rule(r));
  // After the path rules, which would otherwise override them (the root's rule covers /dev too);
  // before the sealed paths, which nothing overrides.
  lines.push(
    '(allow file-read-metadata (literal "/"))',
    '(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper"))',
    '(allow file-read* (literal "/dev/random") (literal "/dev/urandom"))',
  );
  for (const r of plan.sealed) lines.push(...rule(r));
  if (proxyPort === undefined) lines.push('(deny network*)');
  else {
    if (!Number.isInteger(proxyPort) || proxyPort < 1 || proxyPort > 65_535) throw new RangeError(`${proxyPort} is not a port.`);
    lines.push('(deny network*)', `(allow network-outbound (remote ip "localhost:${proxyPort}"))`);
  }
  return `${lines.join('\n')}\n`;
}

function rule(r: PathRule): string[] {
  const path = r.path === '/' ? '(subpath "/")' : `(subpath ${quote(r.path)})`;
  switch (r.access) {
    case 'none':
      return [`(deny file-read* file-write* ${path})`];
    case 'ro':
      return [`(allow file-read* ${path})`, `(deny file-write* ${path})`];
    case 'rw':
    // Seatbelt cannot mount an empty folder over one: strict's private temp folder is the real one, writable.
    case 'scratch':
      return [`(allow file-read* file-write* ${path})`];
  }
}

/** An SBPL string literal. */
function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
