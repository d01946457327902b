/**
 * A clock for code that takes `now` (ms since the epoch): real time, moved on by the test. A test
 * that needs time to pass (a token near its expiry, a file that has settled) moves it instead of
 * sleeping, and what it checks no longer depends on how busy the machine is.
 */
export function testClock(): { now: () => number; advance: (ms: number) => void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms;
    },
  };
}
