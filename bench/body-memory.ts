import { fork } from 'node:child_process';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { loadavg } from 'node:os';
import { readJsonBody } from '../main/http/json-body.js';
import { memoryOf, resetPeak } from './lib/child.js';
import { log, median } from './lib/util.js';

/*
 * What one request body costs the server in memory while it is read: peak RSS growth (VmHWM, reset
 * just before the request) over the body's size, for this app's reader (`readJsonBody`, parsing as
 * the bytes arrive) against the usual one (gather the chunks, `Buffer.concat`, `toString`,
 * `JSON.parse`), each in a fresh process that reads one body, rounds alternating.
 *   node --import tsx bench/body-memory.ts [--quick] [--mib N]
 */

const MAX_BYTES = 64 * 2 ** 20;
type Reader = 'ours' | 'baseline';
type Shape = 'text' | 'records' | 'structure';

/** The usual reader, for comparison: every chunk, then one buffer, then the text, then the value. */
function readWhole(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Child: serves one body with `reader`, reports peak RSS growth and time, exits. */
async function child(reader: Reader): Promise<void> {
  const measure = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const before = (await memoryOf(process.pid)).rss;
    if (!(await resetPeak(process.pid)))
      throw new Error("this kernel does not reset VmHWM (/proc/<pid>/clear_refs): the peak would not be this request's");
    const started = performance.now();
    const outcome = await (reader === 'ours' ? readJsonBody(req, MAX_BYTES) : readWhole(req)).then(
      (value) => (typeof value === 'object' ? 'parsed' : 'odd'),
      (error: { status?: number }) => `refused ${error.status ?? '?'}`,
    );
    const report = { growth: (await memoryOf(process.pid)).hwm - before, ms: performance.now() - started, outcome };
    res.end();
    process.send!(report, () => process.exit(0));
  };
  // A failed measurement ends the child, which the parent reports.
  const server = createServer((req, res) => {
    measure(req, res).catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
}

function body(shape: Shape, bytes: number): Buffer {
  const call = (args: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write', arguments: args } });
  if (shape === 'text') return Buffer.from(JSON.stringify(call({ path: '/tmp/out', content: 'a'.repeat(bytes - 110) })));
  if (shape === 'records') {
    // 20,000 small records (keys, numbers, escapes, non-ASCII) and a long text.
    const records = Array.from({ length: 20_000 }, (_, i) => ({
      id: i,
      name: `item ${i} é`,
      tags: ['a', 'b'],
      note: 'x'.repeat(i % 40) + '"\n',
    }));
    const head = JSON.stringify(call({ path: '/tmp/out', records, content: '' }));
    return Buffer.from(JSON.stringify(call({ path: '/tmp/out', records, content: 'c'.repeat(bytes - head.length) })));
  }
  return Buffer.from(`[${'{},'.repeat(Math.floor(bytes / 3) - 1)}{}]`);
}

interface Run {
  growth: number;
  ms: number;
  outcome: string;
}

async function measure(reader: Reader, payload: Buffer): Promise<Run> {
  const proc = fork(new URL(import.meta.url).pathname, ['--child', reader], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: Array<Record<string, unknown>> = [];
  let wake: (() => void) | undefined;
  proc.on('message', (m: Record<string, unknown>) => {
    messages.push(m);
    wake?.();
  });
  const next = async (): Promise<Record<string, unknown>> => {
    while (messages.length === 0) await new Promise<void>((r) => (wake = r));
    return messages.shift()!;
  };
  const { port } = (await next()) as { port: number };
  const req = request(
    { port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': payload.length } },
    (res) => res.resume(),
  );
  req.on('error', () => {}); // a refusal may close the socket while the body is still going out
  req.end(payload);
  const run = (await next()) as unknown as Run;
  await new Promise((r) => proc.once('exit', r));
  return run;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Reader);
} else {
  const quick = process.argv.includes('--quick');
  const mibArg = process.argv.indexOf('--mib');
  const mib = mibArg > 0 ? Number(process.argv[mibArg + 1]) : 48;
  const rounds = quick ? 1 : 3;
  const shapes: Shape[] = ['text', 'records', 'structure'];
  const results = new Map<string, Run[]>();
  const load = loadavg()[0]!;
  for (let round = 1; round <= rounds; round++) {
    for (const shape of shapes) {
      const payload = body(shape, mib * 2 ** 20);
      for (const reader of round % 2 ? (['ours', 'baseline'] as const) : (['baseline', 'ours'] as const)) {
        const run = await measure(reader, payload);
        log(
          `round ${round}: ${shape}, ${reader}: ${(run.growth / payload.length).toFixed(2)}x in ${run.ms.toFixed(0)} ms (${run.outcome})`,
        );
        const key = `${shape}\t${reader}\t${payload.length}`;
        results.set(key, [...(results.get(key) ?? []), run]);
      }
    }
  }
  console.log(
    `\nload average ${load.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at the end; ${process.version}; ${rounds} round(s)\n`,
  );
  console.log('| body | reader | size (MiB) | peak RSS growth ÷ size (median; each run) | read time (ms, median) | outcome |');
  console.log('|---|---|---|---|---|---|');
  for (const [key, runs] of results) {
    const [shape, reader, size] = key.split('\t') as [string, string, string];
    const ratios = runs.map((r) => r.growth / Number(size));
    console.log(
      `| ${shape} | ${reader} | ${(Number(size) / 2 ** 20).toFixed(1)} | **${median(ratios).toFixed(2)}** (${ratios.map((r) => r.toFixed(2)).join(', ')}) | ${median(runs.map((r) => r.ms)).toFixed(0)} | ${runs[0]!.outcome} |`,
    );
  }
}
