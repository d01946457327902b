/**
 * The node:test reporter of a batch (test-batch.ts: several test files in one process), and
 * `readBatch`, which run-tests.ts reads its reports with. The reporter writes a line of JSON per
 * file as soon as the file's tests have ended (`FileReport`): whether it passed, its counts as
 * node:test counts them for a file run alone, its time and CPU time, and its results as the spec
 * reporter writes them; then one `BatchEnd` line. A batch that crashes has written the lines of
 * the files before it; `readBatch` names the others.
 */
import { appendFileSync } from 'node:fs';
import type { TestEvent } from 'node:test/reporters';
import { spec } from 'node:test/reporters';
import { cpuMs } from './test-reporter.js';

export type Counts = Record<'tests' | 'pass' | 'fail' | 'cancelled' | 'skipped' | 'todo', number>;

export interface FileReport {
  file: string;
  ok: boolean;
  counts: Counts;
  /** From the end of the file before (or the process's start) to the end of this file's tests: its loading included. */
  ms: number;
  cpuMs?: number;
  /** Its tests as the spec reporter shows them. */
  report: string;
}

/** What happened after the last file: node:test's totals, and a failure that no file's tests were running for. */
export interface BatchEnd {
  end: true;
  ok: boolean;
  cpuMs?: number;
  report: string;
}

/**
 * Where the reports go, which test-batch.ts sets (this module is the reporter's and test-batch.ts's
 * both). Written at once, not through node:test's stream: a file that ends the process finds the
 * reports of the files before it on disk.
 */
let reportsFile: string | undefined;
export function writeReportsTo(path: string): void {
  reportsFile = path;
}
function write(line: FileReport | BatchEnd): void {
  if (reportsFile !== undefined) appendFileSync(reportsFile, `${JSON.stringify(line)}\n`);
}
const reportedFiles = new Set<string>();
const waiting = new Map<string, () => void>();
/** Once the file's report is written: test-batch.ts loads the next file only then. */
export function reported(file: string): Promise<void> {
  return reportedFiles.has(file) ? Promise.resolve() : new Promise((resolve) => waiting.set(file, resolve));
}

/** The line test-batch.ts writes before loading a file; what it prints from then on is that file's. */
export const fileMarker = (file: string): string => `\u001e[test batch] ${file}`;
/** The name of the test that test-batch.ts runs once a file's tests have ended. */
export const endOfFile = (file: string): string => `[test batch] end of ${file}`;
const END_OF_FILE = /^\[test batch\] end of (.+)$/;

/** Reasons node:test counts a failed test as cancelled rather than failed. */
const CANCELLED = new Set(['cancelledByParent', 'testTimeoutFailure']);

type Result = Extract<TestEvent, { type: 'test:pass' | 'test:fail' }>;
const isResult = (event: TestEvent): event is Result => event.type === 'test:pass' || event.type === 'test:fail';
/** A failure that fails the run: node:test lets a todo test fail. */
const fails = (event: TestEvent): boolean => event.type === 'test:fail' && event.data.todo === undefined;

/** The counts node:test gives at the end of a run, for these events alone (its own rules: suites are not tests). */
export function countTests(events: TestEvent[]): Counts {
  const counts: Counts = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  for (const event of events) {
    if (!isResult(event) || event.data.details.type === 'suite') continue;
    counts.tests += 1;
    if (event.data.skip !== undefined) counts.skipped += 1;
    else if (event.data.todo !== undefined) counts.todo += 1;
    else if (event.type === 'test:pass') counts.pass += 1;
    else if (CANCELLED.has((event.data.details.error as Error & { failureType?: string }).failureType ?? '')) counts.cancelled += 1;
    else counts.fail += 1;
  }
  return counts;
}

/** The events as the spec reporter writes them. */
async function asSpec(events: TestEvent[]): Promise<string> {
  const reporter = new spec();
  let text = '';
  const read = (async () => {
    for await (const chunk of reporter) text += String(chunk);
  })();
  for (const event of events) reporter.write(event);
  reporter.end();
  await read;
  return text;
}

/** Events that the spec reporter shows, in the order it shows them (enqueue, dequeue and complete come as they happen). */
const SHOWN = new Set(['test:start', 'test:pass', 'test:fail', 'test:diagnostic', 'test:stdout', 'test:stderr']);

/** Writes nothing to node:test's destination: see `writeReportsTo`. */
export default async function* batchReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  let events: TestEvent[] = [];
  let started = 0;
  let cpuBefore = 0;
  for await (const event of source) {
    if (!SHOWN.has(event.type)) continue;
    const file = event.data && 'name' in event.data && event.data.nesting === 0 ? END_OF_FILE.exec(event.data.name)?.[1] : undefined;
    if (file === undefined) {
      events.push(event);
      continue;
    }
    if (!isResult(event)) continue;
    // The end-of-file test fails only when the file could not be loaded: its error is the file's.
    if (event.type === 'test:fail') events.push(event);
    const [now, cpu] = [performance.now(), await cpuMs()];
    const line: FileReport = {
      file,
      ok: !events.some(fails),
      counts: countTests(events.filter((e) => e !== event)),
      ms: now - started,
      ...(cpu !== undefined && { cpuMs: cpu - cpuBefore }),
      report: await asSpec(events),
    };
    write(line);
    reportedFiles.add(file);
    waiting.get(file)?.();
    [events, started, cpuBefore] = [[], now, cpu ?? 0];
  }
  const cpu = await cpuMs();
  const end: BatchEnd = { end: true, ok: !events.some(fails), ...(cpu !== undefined && { cpuMs: cpu }), report: await asSpec(events) };
  write(end);
}

/** A file's outcome in a batch, as run-tests.ts reports a file that ran alone. */
export interface FileOutcome {
  ok: boolean;
  ms: number;
  /** Its results, then what it printed. */
  output: string;
  counts?: Counts & { cpuMs?: number };
  note?: string;
}

/**
 * Each file's outcome from a batch's reports (`files`: compiled path to the name to report, in the
 * batch's order) and its output; `failed`: how the process ended when it did not exit with 0
 * (`exited with 1`). The batch itself fails where something failed after its files' tests, or
 * the process ended before the last of them.
 */
export function readBatch(
  files: Map<string, string>,
  reports: string,
  output: string,
  failed: string | undefined,
): { ok: boolean; files: Array<{ name: string; outcome: FileOutcome }>; output: string; note?: string; cpuMs?: number } {
  const lines = reports
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FileReport | BatchEnd);
  const printed = printedByFile(output, [...files.keys()]);
  const outcomes = [...files].map(([path, name]) => {
    const report = lines.find((line): line is FileReport => 'file' in line && line.file === path);
    const text = `${report?.report ?? ''}${printed.get(path) ?? ''}`;
    const outcome: FileOutcome = report
      ? {
          ok: report.ok,
          ms: report.ms,
          output: text,
          counts: { ...report.counts, ...(report.cpuMs !== undefined && { cpuMs: report.cpuMs }) },
        }
      : { ok: false, ms: 0, output: text, note: `its batch ${failed ?? 'ended'} before this file reported` };
    return { name, outcome };
  });
  const end = lines.find((line): line is BatchEnd => 'end' in line);
  const filesFailed = outcomes.some(({ outcome }) => !outcome.ok);
  // node:test exits with 1 when a test failed; with all passed, whatever made it fail is the batch's own.
  const batchOk = end !== undefined && end.ok && (failed === undefined || filesFailed);
  return {
    ok: batchOk && !filesFailed,
    files: outcomes,
    output: batchOk ? '' : `${end?.report ?? ''}${output}`,
    ...(!batchOk && { note: end ? `${failed ?? 'failed'} after its files` : (failed ?? 'ended before its files did') }),
    ...(end?.cpuMs !== undefined && { cpuMs: end.cpuMs }),
  };
}

/** A batch's output, cut at the line test-batch.ts writes before each file: what each file printed. */
function printedByFile(output: string, files: string[]): Map<string, string> {
  const byMarker = new Map(files.map((file) => [fileMarker(file), file]));
  const printed = new Map<string, string>();
  let current: string | undefined;
  for (const line of output.split(/(?<=\n)/)) {
    const file = byMarker.get(line.replace(/\n$/, ''));
    if (file !== undefined) current = file;
    else if (current !== undefined) printed.set(current, (printed.get(current) ?? '') + line);
  }
  return printed;
}
