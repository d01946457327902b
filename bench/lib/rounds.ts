import { runSegment, summarize, type Call, type Segment, type Session, type Summary } from './load.js';
import { log, median } from './util.js';

export type CaseName = 'c1' | 'c8';
export const CASES = ['c1', 'c8'] as const;

export interface Plan {
  rounds: number;
  /** Per round and target: calls one after another on one session. */
  c1Calls: number;
  /** Per round and target: calls per session, all sessions running at once (one call in flight each). */
  c8CallsPerSession: number;
  warmupC1: number;
  warmupC8PerSession: number;
}

/** One thing being measured: its sessions (already open), the call they make, and whose CPU to count. */
export interface Runner {
  key: string;
  sessions: Session[];
  call: Call;
  /** The processes whose CPU time is measured during its segments (all count as "server"). */
  pids: number[];
}

export interface RoundFigures {
  p50: number;
  throughput: number;
  serverCpuPerCall: number;
}

export interface CaseFigures {
  concurrency: number;
  /** Per target key: over all rounds. */
  summaries: Record<string, Summary>;
  /** Per target key: each round's figures. */
  perRound: Record<string, RoundFigures[]>;
}

/**
 * Warm-up, then `plan.rounds` rounds; in each, every runner does its c1 segment (one session, one
 * call at a time), then every runner does its c8 segment (all sessions at once). The order rotates
 * every second round and is reversed every other round, so each runner takes each place about
 * equally often and drift in the machine's load hits all alike.
 */
export async function runRounds(runners: Runner[], plan: Plan): Promise<Record<CaseName, CaseFigures>> {
  const runCase = (r: Runner, name: CaseName, warm = false): Promise<Segment> =>
    name === 'c1'
      ? runSegment(r.pids, r.sessions.slice(0, 1), r.call, warm ? plan.warmupC1 : plan.c1Calls)
      : runSegment(r.pids, r.sessions, r.call, warm ? plan.warmupC8PerSession : plan.c8CallsPerSession);

  log('  warming up...');
  for (const r of runners) {
    await runCase(r, 'c1', true);
    await runCase(r, 'c8', true);
  }

  const segments: Record<CaseName, Record<string, Segment[]>> = { c1: {}, c8: {} };
  for (const name of CASES) for (const r of runners) segments[name][r.key] = [];
  for (let round = 0; round < plan.rounds; round++) {
    // Rotated every second round and reversed every other one: a, b / b, a / b, a / a, b for two
    // runners. (Rotating every round and reversing every other one cancels out for two runners:
    // it would run them in the same order every round.)
    const shift = Math.floor(round / 2);
    const rotated = runners.map((_, i) => runners[(i + shift) % runners.length]!);
    const order = round % 2 === 0 ? rotated : rotated.reverse();
    const line: string[] = [];
    for (const name of CASES) {
      for (const r of order) segments[name][r.key]!.push(await runCase(r, name));
      const p50 = (key: string) => median(segments[name][key]!.at(-1)!.latencies);
      line.push(`${name} p50 ${runners.map((r) => `${r.key} ${p50(r.key).toFixed(2)}`).join(', ')} ms`);
    }
    log(`  round ${round + 1}/${plan.rounds}: ${line.join('; ')}`);
  }

  const cases = {} as Record<CaseName, CaseFigures>;
  for (const name of CASES) {
    cases[name] = {
      concurrency: name === 'c1' ? 1 : Math.max(...runners.map((r) => r.sessions.length)),
      summaries: Object.fromEntries(runners.map((r) => [r.key, summarize(segments[name][r.key]!)])),
      perRound: Object.fromEntries(
        runners.map((r) => [
          r.key,
          segments[name][r.key]!.map((s) => ({
            p50: median(s.latencies),
            throughput: (s.latencies.length / s.wallMs) * 1000,
            serverCpuPerCall: s.serverCpuMs / s.latencies.length,
          })),
        ]),
      ),
    };
  }
  return cases;
}

/** The median over the rounds of `a`'s figure minus `b`'s in the same round (they ran back to back). */
export function pairedMedian(c: CaseFigures, a: string, b: string, field: keyof RoundFigures): number {
  return median(c.perRound[a]!.map((x, i) => x[field] - c.perRound[b]![i]![field]));
}

/** The per-round ratios of `a`'s p50 over `b`'s. */
export function roundRatios(c: CaseFigures, a: string, b: string): number[] {
  return c.perRound[a]!.map((x, i) => x.p50 / c.perRound[b]![i]!.p50);
}
