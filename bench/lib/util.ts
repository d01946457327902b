/** Small helpers shared by the benchmarks. */

const benchStarted = performance.now();

/** Progress on stderr, each line stamped with the seconds since the start. */
export function log(message: string): void {
  const lead = message.match(/^\n*/)![0];
  const seconds = ((performance.now() - benchStarted) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`${lead}[${seconds}s] ${message.slice(lead.length)}\n`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function signed(ms: number, digits = 2): string {
  return `${ms >= 0 ? '+' : ''}${ms.toFixed(digits)}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
