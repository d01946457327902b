/**
 * A node:test reporter that writes one test file's totals as JSON (run-tests.ts reads them): the
 * counts node:test itself gives at the end of a run (tests, pass, fail, cancelled, skipped, todo).
 */
interface TestEvent {
  type: string;
  data: { nesting?: number; message?: string };
}

export default async function* totals(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const counts: Record<string, number> = {};
  for await (const event of source) {
    if (event.type !== 'test:diagnostic' || event.data.nesting !== 0) continue;
    const [, name, value] = /^(tests|pass|fail|cancelled|skipped|todo) (\d+)$/.exec(event.data.message ?? '') ?? [];
    if (name) counts[name] = Number(value);
  }
  yield `${JSON.stringify(counts)}\n`;
}
