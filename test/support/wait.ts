import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits until `check` gives a truthy value, and returns it; fails with "timed out waiting for
 * <what>" after `timeoutMs`. The one way tests wait for what happens on its own (a watcher, a child
 * process, a server, a file): asked again every `everyMs` (20 ms; longer where a check is costly and
 * what it waits for lasts), never a fixed sleep, never without an end.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
  everyMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
