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

export function unifiedDiff(before: string, after: string): string {
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
  return render(hunks(ops));
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

function render(groups: Op[][]): string {
  const lines: string[] = [];
  for (const group of groups) {
    const first = group[0]!;
    const aCount = group.filter((op) => op.kind !== '+').length;
    const bCount = group.filter((op) => op.kind !== '-').length;
    // Unified format: an empty side names the line before it.
    const aStart = aCount === 0 ? first.a : first.a + 1;
    const bStart = bCount === 0 ? first.b : first.b + 1;
    lines.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const op of group) lines.push(op.kind + shorten(op.text));
  }
  if (lines.length <= DIFF_MAX_LINES) return lines.join('\n');
  return [...lines.slice(0, DIFF_MAX_LINES), `... ${lines.length - DIFF_MAX_LINES} more diff lines not shown`].join('\n');
}

function shorten(text: string): string {
  return text.length <= DIFF_MAX_LINE_CHARS ? text : `${text.slice(0, DIFF_MAX_LINE_CHARS)}…`;
}
