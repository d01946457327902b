/**
 * Prints what a command lists or shows as JSON (`--json`), in the shape its schema in common/ gives.
 * JSON.stringify escapes control characters, so text from outside reaches the terminal inert.
 */
export function printJson(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}
