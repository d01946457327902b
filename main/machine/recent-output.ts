/** Keeps the last bytes a command printed, to show its latest line in progress messages. */

/** Bytes of recent output kept: enough for the last line of most programs. */
export const RECENT_OUTPUT_BYTES = 2048;
const MAX_LINE_CHARS = 200;

export class RecentOutput {
  private recent = Buffer.alloc(0);

  add(chunk: Buffer): void {
    const joined = Buffer.concat([this.recent, chunk.subarray(Math.max(0, chunk.length - RECENT_OUTPUT_BYTES))]);
    this.recent = joined.subarray(Math.max(0, joined.length - RECENT_OUTPUT_BYTES));
  }

  /** The last non-blank line, without terminal escapes; undefined before any output. */
  lastLine(): string | undefined {
    const text = this.recent
      .toString('utf8')
      // Terminal escape sequences (colours, cursor moves, titles) are noise in a one-line summary.
      .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07/g, '');
    const lines = text.split('\n').map((line) => {
      // A progress bar redraws its line after \r; the text after the last \r is what is on screen.
      const screen = line.replace(/\r+$/, '');
      return screen.slice(screen.lastIndexOf('\r') + 1).trim();
    });
    const last = lines.reverse().find((line) => line !== '');
    if (last === undefined) return undefined;
    return last.length <= MAX_LINE_CHARS ? last : `${last.slice(0, MAX_LINE_CHARS)}…`;
  }
}
