/** A short unified-style line diff, for showing an agent what an edit changed. */

/** Most diff lines returned; the rest is counted, not shown. */
export const DIFF_MAX_LINES = 80;
/** Longer lines are shortened in the diff. */
export const DIFF_MAX_LINE_CHARS = 200;
const CONTEXT_LINES = 3;
// Past this many differing lines the exact diff is not worth its cost; the changed block is shown whole.
const MAX_EDIT_DISTANCE = 500;

interface Op {
  kind: ' ' | '-' | '+';
  text: string;
  /** Index of the next line of each side at this point. */
  a: number;
  b: number;
}

export interface DiffOptions {
  /** The numbers of the first lines of `before` and `after` (parts of larger files); 1 by default. */
  firstLine?: { a: number; b: number };
  /**
   * `before` and `after` were cut from larger files at that end, where they need not line up:
   * hunks that reach their line there are left out.
   */
  cut?: 'start' | 'end';
}

export function unifiedDiff(before: string, after: string, options: DiffOptions = {}): string {
  const a = splitLines(before);
  const b = splitLines(after);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix += 1;
  if (prefix === a.length && prefix === b.length) return '';

  // Only the region between the common prefix and suffix is diffed, plus context around it.
  const from = Math.max(0, prefix - CONTEXT_LINES);
  const ops: Op[] = [];
  for (let i = from; i < prefix; i += 1) ops.push({ kind: ' ', text: a[i]!, a: i, b: i });
  const middleA = a.slice(prefix, a.length - suffix);
  const middleB = b.slice(prefix, b.length - suffix);
  for (const op of diffLines(middleA, middleB)) ops.push({ ...op, a: op.a + prefix, b: op.b + prefix });
  for (let i = 0; i < Math.min(suffix, CONTEXT_LINES); i += 1) {
    const ai = a.length - suffix + i;
    ops.push({ kind: ' ', text: a[ai]!, a: ai, b: b.length - suffix + i });
  }
  const offset = { a: (options.firstLine?.a ?? 1) - 1, b: (options.firstLine?.b ?? 1) - 1 };
  return render(hunks(options.cut ? trustedOps(ops, a.length, b.length, options.cut) : ops), offset);
}

/**
 * The ops of a diff of parts cut from larger files that can be trusted: those away from the cut
 * end, where a line of one side may have its counterpart beyond the other's end.
 */
function trustedOps(ops: Op[], aLength: number, bLength: number, cut: 'start' | 'end'): Op[] {
  if (cut === 'end') {
    const near = ops.findIndex((op) => op.a >= aLength - 1 - CONTEXT_LINES || op.b >= bLength - 1 - CONTEXT_LINES);
    return near === -1 ? ops : ops.slice(0, near);
  }
  const near = ops.findLastIndex((op) => op.a <= CONTEXT_LINES || op.b <= CONTEXT_LINES);
  return ops.slice(near + 1);
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  // The final newline ends the last line; it does not start an empty one.
  if (lines.at(-1) === '') lines.pop();
  // Line endings are not shown; a CRLF file diffs like an LF one.
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Myers' O(ND) diff; falls back to "all removed, all added" when the lines differ too much. */
function diffLines(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const maxD = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = maxD + 1;
  const v = new Int32Array(2 * maxD + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= maxD; d += 1) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, offset);
    }
  }
  return [...a.map((text, i): Op => ({ kind: '-', text, a: i, b: 0 })), ...b.map((text, i): Op => ({ kind: '+', text, a: n, b: i }))];
}

function backtrack(trace: Int32Array[], a: string[], b: string[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d -= 1) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x -= 1;
      y -= 1;
      ops.push({ kind: ' ', text: a[x]!, a: x, b: y });
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', text: b[prevY]!, a: x, b: prevY });
      else ops.push({ kind: '-', text: a[prevX]!, a: prevX, b: y });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

function hunks(ops: Op[]): Op[][] {
  const changes = ops.flatMap((op, i) => (op.kind === ' ' ? [] : [i]));
  const result: Op[][] = [];
  let i = 0;
  while (i < changes.length) {
    const start = Math.max(0, changes[i]! - CONTEXT_LINES);
    let end = Math.min(ops.length, changes[i]! + CONTEXT_LINES + 1);
    let j = i + 1;
    while (j < changes.length && changes[j]! - CONTEXT_LINES <= end) {
      end = Math.min(ops.length, changes[j]! + CONTEXT_LINES + 1);
      j += 1;
    }
    result.push(ops.slice(start, end));
    i = j;
  }
  return result;
}

function render(groups: Op[][], offset: { a: number; b: number }): string {
  const lines: string[] = [];
  for (const group of groups) {
    const first = group[0]!;
    const aCount = group.filter((op) => op.kind !== '+').length;
    const bCount = group.filter((op) => op.kind !== '-').length;
    // Unified format: an empty side names the line before it.
    const aStart = offset.a + (aCount === 0 ? first.a : first.a + 1);
    const bStart = offset.b + (bCount === 0 ? first.b : first.b + 1);
    lines.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const op of group) lines.push(op.kind + shorten(op.text));
  }
  return capped(lines);
}

/** Diff lines, at most DIFF_MAX_LINES of them, and how many more there were. */
export function capped(lines: string[]): string {
  if (lines.length <= DIFF_MAX_LINES) return lines.join('\n');
  return [...lines.slice(0, DIFF_MAX_LINES), `... ${lines.length - DIFF_MAX_LINES} more diff lines not shown`].join('\n');
}

function shorten(text: string): string {
  return text.length <= DIFF_MAX_LINE_CHARS ? text : `${text.slice(0, DIFF_MAX_LINE_CHARS)}…`;
}
