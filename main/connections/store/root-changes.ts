import type { Attachments } from './attachments-file.js';

/** Per place root, a canonical text of its connections: equal texts mean equal connection sets. */
export function rootDigests(attachments: Attachments): Map<string, string> {
  const byRoot = new Map<string, [string, unknown][]>();
  for (const [storeId, entry] of Object.entries(attachments.stores)) {
    if (Object.keys(entry.connections).length === 0) continue;
    const list = byRoot.get(entry.root) ?? [];
    list.push([storeId, entry]);
    byRoot.set(entry.root, list);
  }
  const digests = new Map<string, string>();
  for (const [root, entries] of byRoot) digests.set(root, canonicalJson(entries.sort(([a], [b]) => (a < b ? -1 : 1))));
  return digests;
}

/** The roots whose connection sets differ between two digests, sorted. */
export function changedRoots(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const roots = new Set([...before.keys(), ...after.keys()]);
  return [...roots].filter((root) => before.get(root) !== after.get(root)).sort();
}

// Keys sorted (absent and undefined alike), so the same content in another key order compares equal.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
