import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readBatch } from '../scripts/test-batch-reporter.js';
import { builtPath, builtUrl } from './support/built.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Test files of plain JavaScript, as test-build.ts makes them. */
const FILES: Record<string, string> = {
  'passes.mjs': `import { describe, it } from 'node:test';
describe('passes', () => { it('one', () => {}); it('two', async () => { await new Promise((r) => setTimeout(r, 50)); globalThis.passesEnded = true; }); });
`,
  'mixed.mjs': `import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
console.log('printed by mixed');
describe('mixed', () => {
  it('passes', () => {});
  it('fails here', () => assert.equal(1, 2));
  it('is skipped', { skip: 'why' }, () => {});
  it('is to do', { todo: true }, () => { throw new Error('not yet'); });
  it('times out', { timeout: 20 }, () => new Promise((r) => setTimeout(r, 500)));
});
test('has a subtest', async (t) => { await t.test('inner', () => {}); });
`,
  // Loaded after passes.mjs has ended: its module code sees what that file's last test left.
  'after-passes.mjs': `import assert from 'node:assert/strict';
import { it } from 'node:test';
const seen = globalThis.passesEnded;
console.error('printed by after-passes');
it('was loaded after the file before it ended', () => assert.equal(seen, true));
`,
  'cannot-load.mjs': `throw new Error('this file cannot be loaded');\n`,
  'crashes.mjs': `import { it } from 'node:test';
it('ends the process', () => process.exit(7));
`,
  'never-runs.mjs': `import { it } from 'node:test';
it('would pass', () => {});
`,
};

let dir: string;
const file = (name: string) => join(dir, name);

/** Runs the files in one batch as run-tests.ts does, and reads its reports as run-tests.ts does. */
async function batch(names: string[]): Promise<ReturnType<typeof readBatch>> {
  const reports = join(dir, 'reports.jsonl');
  const outputFile = join(dir, 'output.txt');
  await rm(reports, { force: true });
  await writeFile(outputFile, '');
  const fd = openSync(outputFile, 'a');
  const child = spawn(
    process.execPath,
    [
      `--test-reporter=${builtUrl(join(ROOT, 'scripts', 'test-batch-reporter.ts'))}`,
      '--test-reporter-destination=stdout',
      builtPath(join(ROOT, 'scripts', 'test-batch.ts')),
      reports,
      ...names.map(file),
    ],
    { stdio: ['ignore', fd, fd] },
  );
  closeSync(fd);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return readBatch(
    new Map(names.map((name) => [file(name), name])),
    await readFile(reports, 'utf8').catch(() => ''),
    await readFile(outputFile, 'utf8'),
    code === 0 ? undefined : `exited with ${code}`,
  );
}

/** node:test's own counts for a file run alone in a process (scripts/test-reporter.ts). */
async function countsAlone(name: string): Promise<Record<string, number>> {
  const totals = join(dir, `${name}.totals.json`);
  const child = spawn(
    process.execPath,
    [`--test-reporter=${builtUrl(join(ROOT, 'scripts', 'test-reporter.ts'))}`, `--test-reporter-destination=${totals}`, file(name)],
    { stdio: 'ignore' },
  );
  await new Promise((resolve) => child.once('exit', resolve));
  const { cpuMs: _, ...counts } = JSON.parse(await readFile(totals, 'utf8')) as Record<string, number>;
  return counts;
}

const outcome = (result: Awaited<ReturnType<typeof batch>>, name: string) => result.files.find((f) => f.name === name)!.outcome;

describe('a batch: test files one after the other in one process, each reported as if alone', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-test-batch-'));
    for (const [name, text] of Object.entries(FILES)) await writeFile(file(name), text);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('fails the file whose test failed, and only it, with its results and what it printed, and the batch with it', async () => {
    const result = await batch(['passes.mjs', 'mixed.mjs', 'after-passes.mjs']);
    assert.equal(result.ok, false);
    assert.equal(outcome(result, 'passes.mjs').ok, true);
    assert.equal(outcome(result, 'after-passes.mjs').ok, true, outcome(result, 'after-passes.mjs').output);
    const mixed = outcome(result, 'mixed.mjs');
    assert.equal(mixed.ok, false);
    assert.match(mixed.output, /✖ fails here/);
    assert.match(mixed.output, /printed by mixed/);
    assert.doesNotMatch(outcome(result, 'passes.mjs').output, /fails here|printed by/);
    assert.match(outcome(result, 'after-passes.mjs').output, /printed by after-passes/);
    assert.doesNotMatch(outcome(result, 'after-passes.mjs').output, /printed by mixed/);
    // The batch's failure is its file's: nothing of its own to report.
    assert.equal(result.note, undefined);
  });

  it('counts each file as node:test counts it run alone', async () => {
    const result = await batch(['mixed.mjs', 'passes.mjs', 'after-passes.mjs']);
    for (const name of ['mixed.mjs', 'passes.mjs']) {
      const { cpuMs: _, ...counts } = outcome(result, name).counts!;
      assert.deepEqual(counts, await countsAlone(name), name);
    }
    assert.deepEqual(outcome(result, 'mixed.mjs').counts && { ...outcome(result, 'mixed.mjs').counts, cpuMs: 0 }, {
      tests: 7,
      pass: 3,
      fail: 1,
      cancelled: 1,
      skipped: 1,
      todo: 1,
      cpuMs: 0,
    });
  });

  it('fails a file that cannot be loaded with its error, and runs the files after it', async () => {
    const result = await batch(['cannot-load.mjs', 'passes.mjs']);
    const failed = outcome(result, 'cannot-load.mjs');
    assert.equal(failed.ok, false);
    assert.match(failed.output, /this file cannot be loaded/);
    assert.equal(outcome(result, 'passes.mjs').ok, true);
    assert.deepEqual(outcome(result, 'passes.mjs').counts?.tests, 2);
  });

  it('names the files that had not reported when the batch ended early, and fails the batch', async () => {
    const result = await batch(['passes.mjs', 'crashes.mjs', 'never-runs.mjs']);
    assert.equal(result.ok, false);
    assert.equal(outcome(result, 'passes.mjs').ok, true);
    for (const name of ['crashes.mjs', 'never-runs.mjs']) {
      assert.equal(outcome(result, name).ok, false);
      assert.equal(outcome(result, name).note, 'its batch exited with 7 before this file reported');
    }
    assert.equal(result.note, 'exited with 7');
  });

  it('passes when every file passes, with its CPU time', async () => {
    const result = await batch(['passes.mjs', 'after-passes.mjs']);
    assert.equal(result.ok, true, result.output);
    assert.ok(result.cpuMs !== undefined && result.cpuMs > 0);
  });
});
