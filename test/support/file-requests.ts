import { createHook } from 'node:async_hooks';

/** How many file requests (`FSREQ*`: each a round trip to libuv's thread pool) this process makes while `run` runs. */
export async function fileRequestsDuring(run: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type.startsWith('FSREQ')) count += 1;
    },
  });
  hook.enable();
  try {
    await run();
  } finally {
    hook.disable();
  }
  return count;
}
