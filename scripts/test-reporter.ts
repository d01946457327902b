/**
 * A node:test reporter that writes one test file's totals as JSON (run-tests.ts reads them): the
 * counts node:test itself gives at the end of a run (tests, pass, fail, cancelled, skipped, todo),
 * and on Linux the CPU time the file used (`cpuMs`): its process's and that of the processes it
 * started and waited for (servers, the CLI, a browser). On a machine that others share, the time a
 * file takes says more about the others than about the file; its CPU time does not.
 */
import { readFile } from 'node:fs/promises';

interface TestEvent {
  type: string;
  data: { nesting?: number; message?: string };
}

/** Linux's clock tick for the times in /proc, fixed at 100 a second for programs whatever the kernel's own rate. */
const USER_HZ = 100;

/** utime + stime + cutime + cstime of this process (fields 14 to 17 of /proc/self/stat), where there is one. */
export async function cpuMs(): Promise<number | undefined> {
  const stat = await readFile('/proc/self/stat', 'utf8').catch(() => undefined);
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (!fields) return undefined;
  return (fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 1000) / USER_HZ;
}

export default async function* totals(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const counts: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue;
    const [, name, value] = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message ?? '') ?? [];
    if (name) counts[name] = Number(value);
  }
  const cpu = await cpuMs();
  if (cpu !== undefined) counts.cpuMs = cpu;
  yield `${JSON.stringify(counts)}\n`;
}
