// Loaded into a measured server (`node --expose-gc --import bench/lib/heap-probe.mjs ...`): on
// SIGUSR2 it collects garbage and prints `heap-probe <n> <bytes>` (the V8 heap in use) on stderr, so that
// the bench counts what objects hold rather than what the allocator happens to keep (RSS).
// n counts the answers, so that the bench tells a new one from the last.
let n = 0;
process.on('SIGUSR2', () => {
  globalThis.gc();
  process.stderr.write(`heap-probe ${(n += 1)} ${process.memoryUsage().heapUsed}\n`);
});
