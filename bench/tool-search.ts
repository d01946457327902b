// npm run bench:tool-search — tool search on the 5-service, 150-tool SaaS fixture, in-process:
// tools/list bytes with tool search on against off, search_tools latency, and top-3 hits for the
// 30 task phrases. Figures go in bench/README.md.
import { SAAS_SERVICES, TASK_PHRASES, inputSchemaOf } from '../e2e/fixtures/saas-tools.js';
import { searchHint } from '../main/connections/tool-search/search-hint.js';
import { CommandRunner } from '../main/machine/command-runner.js';
import { machineTools } from '../main/mcp/machine-tools.js';
import type { SessionTool, ToolExtra } from '../main/mcp/session-tool.js';
import { callToolTool, searchToolsTool } from '../main/mcp/tool-search-tools.js';

const machine = machineTools({ skillsDir: '/nonexistent', commands: new CommandRunner({ maxTimeoutSeconds: 600 }) });
// Shaped as PlaceTools makes them: `<server>__<tool>`, the service's hint in _meta and for search.
const connectionTools: SessionTool[] = SAAS_SERVICES.flatMap((service) => {
  const hint = searchHint(service.name, service.description);
  return service.tools.map((tool) => ({
    definition: { name: `u1a2b3c4d__${service.id}__${tool.name}`, description: tool.description, inputSchema: inputSchemaOf(tool.args), _meta: { 'anthropic/searchHint': hint } },
    search: { name: tool.name, service: hint },
    call: async () => ({ content: [] }),
  }));
});
const search = searchToolsTool(async () => connectionTools);
const bytes = (tools: SessionTool[]) => Buffer.byteLength(JSON.stringify({ tools: tools.map((t) => t.definition) }));
// manage_my_mcp_servers is left out of both lists: it is the same in each.
const on = bytes([...machine, search, callToolTool()]);
const off = bytes([...machine, ...connectionTools]);

const extra = { signal: new AbortController().signal } as ToolExtra;
const phrases = TASK_PHRASES.map(([phrase]) => phrase);
for (let i = 0; i < 200; i += 1) await search.call({ query: phrases[i % phrases.length] }, extra); // warm up
const times: number[] = [];
for (let i = 0; i < 3000; i += 1) {
  const started = performance.now();
  await search.call({ query: phrases[i % phrases.length], limit: 5 }, extra);
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.floor((times.length - 1) * p)]!.toFixed(3);

let hits = 0;
for (const [phrase, expected] of TASK_PHRASES) {
  const result = await search.call({ query: phrase, limit: 3 }, extra);
  const names = ((result.structuredContent as { tools?: Array<{ name: string }> })?.tools ?? []).map((t) => t.name.replace('u1a2b3c4d__', '').replace('__', '/'));
  if (names.some((n) => expected.includes(n))) hits += 1;
}

console.log(`tools/list (machine tools + ${connectionTools.length} connection tools): ${off} bytes with tool search off, ${on} bytes on (${(off / on).toFixed(1)}x smaller)`);
console.log(`search_tools in-process over ${connectionTools.length} tools: p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, p99 ${pct(0.99)} ms (${times.length} searches)`);
console.log(`task phrases with the right tool in the top 3: ${hits}/${TASK_PHRASES.length}`);
