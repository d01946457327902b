import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, CallToolResultSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolRequest, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCall } from './direct-tool-calls.js';
import { toolError, type SessionTool, type ToolExtra } from './session-tool.js';

/** Wraps every tool call; the host supplies auditing. */
export type ToolRunner = (tool: string, extra: ToolExtra, fn: () => Promise<CallToolResult>) => Promise<CallToolResult>;

/** Tools whose set changes while a session is open (a place's connections). */
export interface ToolSource {
  tools(): Promise<SessionTool[]>;
  /** The answer for a name that is not among the tools, when this source knows why. */
  explainUnknown?(name: string): Promise<string | undefined>;
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

  const call = async (request: CallToolRequest, extra: ToolExtra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    const tool = byName.get(name) ?? (await findIn(sources, name));
    if (!tool) {
      const reasons = await Promise.all(sources.map((source) => source.explainUnknown?.(name)));
      const reason = reasons.find(Boolean);
      return toolError(reason ?? `There is no tool named "${name}". List the tools to see what this server offers.`);
    }
    return run(name, extra, () => tool.call(args, extra));
  };
  server.server.setRequestHandler(CallToolRequestSchema, call);
  directCalls.set(server, validated(call));
}

const directCalls = new WeakMap<McpServer, ToolCall>();

/** The tools/call handler of a server with a tool table, for calls answered without the SDK transport. */
export function toolCallOf(server: McpServer): ToolCall | undefined {
  return directCalls.get(server);
}

/** The checks the SDK's Server wraps a tools/call handler in: the request, then the result, against their schemas. */
function validated(call: (request: CallToolRequest, extra: ToolExtra) => Promise<CallToolResult>): ToolCall {
  return async (request, extra) => {
    const parsed = CallToolRequestSchema.safeParse(request);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${parsed.error.message}`);
    const result = CallToolResultSchema.safeParse(await call(parsed.data, extra));
    if (!result.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${result.error.message}`);
    return result.data;
  };
}

async function findIn(sources: ToolSource[], name: string): Promise<SessionTool | undefined> {
  for (const source of sources) {
    const tool = (await source.tools()).find((t) => t.definition.name === name);
    if (tool) return tool;
  }
  return undefined;
}
