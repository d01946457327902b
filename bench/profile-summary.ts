/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --profile`): self time by where the code
 * lives (our modules, each package, node internals, GC, idle) and the heaviest functions, plus
 * the inclusive time of a few functions of interest.
 *
 *   node --import tsx bench/profile-summary.ts bench/out/prof/CPU.*.cpuprofile
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Functions whose inclusive time (with everything they call) is worth knowing. */
const OF_INTEREST = [
  'verifyAuthorization',
  'jwtVerify',
  'status',
  'hostAndOriginGuard',
  'jsonParser',
  'handleRequest',
  'readFile',
  'readLines',
  'sniffText',
  'record',
  'append',
  'safeParseAsync',
  'validateToolInput',
  'executeToolHandler',
  'writeSSEEvent',
  // the gateway's per-call work (bench/gateway.ts)
  'findIn',
  'usable',
  'snapshot',
  'names',
  'accounts',
  'checkAppToken',
  'withClient',
  'guardedFetch',
  'checkTarget',
  'processStream',
];

/** Native functions that hand an fs request to the thread pool. */
const FS_NATIVES = new Set(['stat', 'lstat', 'fstat', 'open', 'openFileHandle', 'close', 'read']);

export function where(url: string): string {
  if (url === '') return 'native/VM';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const ours = /\/dist\/(main\/.+)$/.exec(url) ?? /\/(main\/.+|bench\/.+)$/.exec(url);
  if (ours) return `ours: ${ours[1]!.replace(/\.js$/, '')}`;
  return url;
}

export async function summarizeProfile(path: string): Promise<string> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = profile.endTime - profile.startTime;

  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    const special = ['(idle)', '(garbage collector)', '(program)'].includes(callFrame.functionName);
    const group = special ? callFrame.functionName : where(callFrame.url);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const fn = `${callFrame.functionName || '(anonymous)'} ${special ? '' : `[${where(callFrame.url)}:${callFrame.lineNumber + 1}]`}`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }

  // Inclusive time: a node's self time plus its descendants', counted once per outermost frame.
  const inclusive = new Map<string, number>();
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const name = byId.get(at)!.callFrame.functionName;
      if (OF_INTEREST.includes(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      }
    }
  }

  const busyUs = totalUs - (groups.get('(idle)') ?? 0);
  const pct = (us: number, of: number) => `${((100 * us) / of).toFixed(1)}%`;
  const lines = [
    `profile ${path}: ${(totalUs / 1e6).toFixed(1)} s, busy ${(busyUs / 1e6).toFixed(1)} s`,
    '',
    'self time by place (% of busy):',
  ];
  for (const [g, us] of [...groups].sort((a, b) => b[1] - a[1])) {
    if (g === '(idle)') continue;
    lines.push(`  ${pct(us, busyUs).padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${g}`);
  }
  lines.push('', 'heaviest functions, self time (% of busy):');
  for (const [f, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    if (f.startsWith('(idle)')) continue;
    lines.push(`  ${pct(us, busyUs).padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${f}`);
  }
  // Native fs calls only queue work for libuv's thread pool, yet on a busy box their self time is
  // large: waking a pool thread lets the scheduler run something else, and the samples land here.
  let fsUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.url === '' && FS_NATIVES.has(callFrame.functionName)) fsUs += us;
  }
  lines.push(
    '',
    `native fs calls (${[...FS_NATIVES].join(', ')}), self time: ${(fsUs / 1000).toFixed(0)} ms, ${pct(fsUs, busyUs)} of busy`,
  );
  lines.push('', 'inclusive time of functions of interest (% of busy):');
  for (const name of OF_INTEREST) {
    const us = inclusive.get(name);
    if (us) lines.push(`  ${pct(us, busyUs).padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const path of process.argv.slice(2)) process.stdout.write(await summarizeProfile(path));
}
