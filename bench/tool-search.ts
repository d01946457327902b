// npm run bench:tool-search — tool search on the evaluation set (bench/tool-search-set: 156 tools of
// eight real MCP servers, 120 task phrases in people's words, 40 held-out ones, 52 keyword queries), in-process:
// how often the right tool is in the top 1, 3 and 5, search_tools latency, and tools/list bytes
// with tool search on against off. Figures go in bench/README.md.
import { serverNameOf, storeIdOf, unlistedCatalogId } from '../main/connections/store/naming.js';
import { searchHint } from '../main/connections/tool-search/search-hint.js';
import { connectionTools } from '../main/mcp/place-tools.js';
import { CommandRunner } from '../main/machine/command-runner.js';
import { machineTools } from '../main/mcp/machine-tools.js';
import type { SessionTool, ToolExtra } from '../main/mcp/session-tool.js';
import { callToolTool, searchToolsTool } from '../main/mcp/tool-search-tools.js';
import { HELD_OUT, KEYWORDS, PHRASES, type Query } from './tool-search-set/queries.js';
import { loadSet } from './tool-search-set/set.js';

const machine = machineTools({ skillsDir: '/nonexistent', commands: new CommandRunner({ maxTimeoutSeconds: 600 }) });
const idOf = new Map<string, string>();
// Made as PlaceTools makes them, for unlisted connections named as the services are (no catalog description: the hint is the name).
const storeId = storeIdOf('local', 'Crew/bench');
const taken = new Set<string>();
const placeTools: SessionTool[] = loadSet().flatMap((service) => {
  const catalogId = unlistedCatalogId(service.name, taken);
  taken.add(catalogId);
  const tools = connectionTools(
    { name: serverNameOf(storeId, catalogId), displayName: service.name },
    searchHint(service.name, undefined),
    service.tools,
    async () => ({ content: [] }),
  );
  tools.forEach((tool, i) => idOf.set(tool.definition.name, `${service.id}/${service.tools[i]!.name}`));
  return tools;
});
const search = searchToolsTool(async () => placeTools);
const extra = { signal: new AbortController().signal } as ToolExtra;

async function ranks(queries: readonly Query[]): Promise<{ top1: number; top3: number; top5: number; misses: string[] }> {
  let top1 = 0;
  let top3 = 0;
  let top5 = 0;
  const misses: string[] = [];
  for (const [query, right] of queries) {
    const result = await search.call({ query, limit: 5 }, extra);
    const found = ((result.structuredContent as { tools?: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) =>
      idOf.get(t.name)!,
    );
    const at = found.findIndex((id) => right.includes(id));
    if (at === 0) top1 += 1;
    if (at >= 0 && at < 3) top3 += 1;
    if (at >= 0) top5 += 1;
    if (at < 0 || at >= 3) misses.push(`${query} -> ${found.slice(0, 3).join(', ')} (want ${right.join(' or ')})`);
  }
  return { top1, top3, top5, misses };
}

const bytes = (tools: SessionTool[]) => Buffer.byteLength(JSON.stringify({ tools: tools.map((t) => t.definition) }));
// manage_my_mcp_servers is left out of both lists: it is the same in each.
const on = bytes([...machine, search, callToolTool()]);
const off = bytes([...machine, ...placeTools]);

const all = [...PHRASES, ...HELD_OUT, ...KEYWORDS].map(([query]) => query);
for (let i = 0; i < 300; i += 1) await search.call({ query: all[i % all.length] }, extra); // warm up
const times: number[] = [];
for (let i = 0; i < 3000; i += 1) {
  const started = performance.now();
  await search.call({ query: all[i % all.length], limit: 5 }, extra);
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.floor((times.length - 1) * p)]!.toFixed(3);

const phrases = await ranks(PHRASES);
const heldOut = await ranks(HELD_OUT);
const keywords = await ranks(KEYWORDS);
const line = (label: string, r: typeof phrases, n: number) =>
  `${label}: top-1 ${r.top1}/${n}, top-3 ${r.top3}/${n} (${((100 * r.top3) / n).toFixed(1)}%), top-5 ${r.top5}/${n}`;
console.log(line('task phrases', phrases, PHRASES.length));
console.log(line('held-out phrases', heldOut, HELD_OUT.length));
console.log(line('keyword queries', keywords, KEYWORDS.length));
console.log(
  `search_tools in-process over ${placeTools.length} tools: p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, p99 ${pct(0.99)} ms (${times.length} searches)`,
);
console.log(`tools/list (machine tools + ${placeTools.length} connection tools): ${off} bytes with tool search off, ${on} bytes on`);
if (process.argv.includes('--misses')) console.log(`\nnot in the top 3:\n${[...phrases.misses, ...keywords.misses].join('\n')}`);
if (process.argv.includes('--held-out-misses')) console.log(`\nheld out, not in the top 3:\n${heldOut.misses.join('\n')}`);
