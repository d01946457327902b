import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toolError, type SessionTool, type ToolExtra } from './session-tool.js';

/** Wraps every tool call; the host supplies auditing. */
export type ToolRunner = (tool: string, extra: ToolExtra, fn: () => Promise<CallToolResult>) => Promise<CallToolResult>;

/** Tools whose set changes while a session is open (a place's connections). */
export interface ToolSource {
  tools(): Promise<SessionTool[]>;
  /** The answer for a name that is not among the tools, when this source knows why. */
  explainUnknown?(name: string): string | undefined;
}

/**
 * Serves tools/list and tools/call for one session from fixed tools (the machine's) and changing
 * sources. The SDK's McpServer needs zod schemas for every tool; upstream tools come with JSON
 * Schema that must pass through untouched, so the table answers these two requests itself.
 */
export function installToolTable(server: McpServer, fixed: SessionTool[], sources: ToolSource[], run: ToolRunner): void {
  const byName = new Map(fixed.map((tool) => [tool.definition.name, tool]));
  server.server.registerCapabilities({ tools: { listChanged: true } });

  server.server.setRequestHandler(ListToolsRequestSchema, async () => {
    const dynamic = await Promise.all(sources.map((source) => source.tools()));
    return { tools: [...fixed, ...dynamic.flat()].map((tool) => tool.definition) };
  });

  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const tool = byName.get(name) ?? (await findIn(sources, name));
    if (!tool) {
      const reason = sources.map((source) => source.explainUnknown?.(name)).find(Boolean);
      return toolError(reason ?? `There is no tool named "${name}". List the tools to see what this server offers.`);
    }
    return run(name, extra, () => tool.call(args, extra));
  });
}

async function findIn(sources: ToolSource[], name: string): Promise<SessionTool | undefined> {
  for (const source of sources) {
    const tool = (await source.tools()).find((t) => t.definition.name === name);
    if (tool) return tool;
  }
  return undefined;
}
