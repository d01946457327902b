/** The line appears only for waits longer than this: a quick answer shows nothing. */
const SHOW_AFTER_MS = 300;

/**
 * While `work` runs, says on stderr what the command waits for, how long it has waited and the
 * longest it can take, on one line that is rewritten each second and erased at the end. Only on a
 * terminal: stdout stays clean for `$(...)` and pipes, and a log gets no control characters.
 */
export async function waitingFor<T>(
  what: string,
  work: Promise<T>,
  limitMs: number,
  stream: NodeJS.WriteStream = process.stderr,
): Promise<T> {
  if (!stream.isTTY) return work;
  const started = Date.now();
  const limit = `at most ${Math.ceil(limitMs / 1000)} s`;
  let shown = false;
  const show = () => {
    shown = true;
    stream.write(`\r\x1b[2K${what}: ${Math.round((Date.now() - started) / 1000)} s (${limit})`);
  };
  const first = setTimeout(() => {
    show();
    timer = setInterval(show, 1_000);
  }, SHOW_AFTER_MS);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await work;
  } finally {
    clearTimeout(first);
    clearInterval(timer);
    if (shown) stream.write('\r\x1b[2K');
  }
}
