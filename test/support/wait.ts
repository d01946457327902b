import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits until `check` gives a truthy value, and returns it; fails with "timed out waiting for
 * <what>" after `timeoutMs`. The one way tests wait for what happens on its own (a watcher, a child
 * process, a server, a file): asked again every 20 ms, never a fixed sleep, never without an end.
 */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
