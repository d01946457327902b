/**
 * Runs several compiled test files in one process (run-tests.ts, for the whole run): `node
 * test-batch.js REPORTS FILE...` imports each file in turn, and the next only when every test of the one
 * before has ended, so that no file's module code runs during another's tests. Loading the product's
 * modules once for many files is what a batch saves.
 *
 * After each file, a test of the batch's own (`endOfFile`) runs: node:test runs top-level tests in
 * the order they were declared, so it ends after the file's tests, and it fails with the file's
 * error when the file could not be loaded. test-batch-reporter.ts cuts the events at these tests,
 * and the marker line written before each file (`fileMarker`) cuts the output the tests print.
 */
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { endOfFile, fileMarker, reported, writeReportsTo } from './test-batch-reporter.js';

const [reports, ...files] = process.argv.slice(2);
writeReportsTo(reports!);
for (const file of files) {
  // Stdout and stderr are one file in a batch (run-tests.ts), so one marker orders both.
  process.stdout.write(`${fileMarker(file)}\n`);
  let failure: unknown;
  try {
    await import(pathToFileURL(file).href);
  } catch (error) {
    failure = error ?? new Error(`${file} threw ${String(error)} while loading`);
  }
  await test(endOfFile(file), () => {
    if (failure !== undefined) throw failure;
  });
  await reported(file);
}
