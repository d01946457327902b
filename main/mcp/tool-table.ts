import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolCall } from './direct-tool-calls.js';
import { toolError, type SessionTool, type ToolExtra } from './session-tool.js';
import { CALL_TOOL, callToolTarget, callToolTool, SEARCH_TOOLS, searchToolsTool } from './tool-search-tools.js';

/** A connection's tool as people read it: the connection's name, and the upstream's own name for the tool. */
export interface ConnectionToolName {
  name: string;
  tool: string;
}

/** Wraps every tool call; the host supplies auditing. `connection`: the call is to a connection's tool. */
export type ToolRunner = (
  tool: string,
  extra: ToolExtra,
  fn: () => Promise<CallToolResult>,
  connection?: ConnectionToolName,
) => Promise<CallToolResult>;

/** Tools whose set changes while a session is open (a place's connections). */
export interface ToolSource {
  tools(): Promise<SessionTool[]>;
  /** The answer for a name that is not among the tools, when this source knows why (and the connection it names, if it knows it). */
  explainUnknown?(name: string): Promise<{ reason: string; connection?: ConnectionToolName } | undefined>;
}

/**
 * Whether tools/list hides the sources' tools behind search_tools and call_tool, given how many
 * tools the session would list otherwise. Asked on every list, so a changed setting applies at once.
 */
export type ToolSearchSwitch = (toolCount: number) => Promise<boolean>;

/**
 * Serves tools/list and tools/call for one session from fixed tools (the machine's) and changing
 * sources. The SDK's McpServer needs zod schemas for every tool; upstream tools come with JSON
 * Schema that must pass through untouched, so the table answers these two requests itself.
 *
 * With tool search on, the list is the fixed tools plus search_tools and call_tool. Those two are
 * callable whether listed or not, and the sources' tools keep answering to their own names.
 */
export function installToolTable(
  server: McpServer,
  fixed: SessionTool[],
  sources: ToolSource[],
  run: ToolRunner,
  toolSearch: ToolSearchSwitch,
): void {
  const sourceTools = async () => (await Promise.all(sources.map((source) => source.tools()))).flat();
  const searchTools = [searchToolsTool(sourceTools), callToolTool()];
  const byName = new Map([...fixed, ...searchTools].map((tool) => [tool.definition.name, tool]));
  server.server.registerCapabilities({ tools: { listChanged: true } });

  server.server.setRequestHandler(ListToolsRequestSchema, async () => {
    const dynamic = await sourceTools();
    const listed = (await toolSearch(fixed.length + dynamic.length)) ? [...fixed, ...searchTools] : [...fixed, ...dynamic];
    return { tools: listed.map((tool) => tool.definition) };
  });

  const call = async (request: CallToolRequest, extra: ToolExtra): Promise<CallToolResult> => {
    let { name, arguments: args } = request.params;
    if (name === CALL_TOOL) {
      // The named tool runs as if called directly: the same lookup (place, usability, switches) and the same audit record.
      const target = callToolTarget(args);
      // Refused, and audited like every call.
      if ('error' in target) return run(CALL_TOOL, extra, async () => toolError(target.error));
      ({ name, arguments: args } = target);
    }
    const tool = byName.get(name) ?? (await findIn(sources, name));
    if (!tool) {
      // Refused, and audited like every call: probing for tools is worth a record too.
      const known = (await Promise.all(sources.map(async (source) => source.explainUnknown?.(name)))).find(Boolean);
      const reason = known?.reason ?? (await unknownName(name, await sourceTools(), (count) => toolSearch(fixed.length + count)));
      return run(name, extra, async () => toolError(reason), known?.connection);
    }
    return run(name, extra, () => tool.call(args, extra), tool.upstream && { name: tool.upstream.server, tool: tool.upstream.tool });
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

/**
 * The answer to a name no tool has: the full names of the tools whose upstream calls them so
 * (`slack_post_message` → `u1a2b3c4d__slack__slack_post_message`), else where to look.
 */
async function unknownName(name: string, tools: SessionTool[], searching: (toolCount: number) => Promise<boolean>): Promise<string> {
  const matches = tools.filter((tool) => tool.upstream?.tool === name || tool.definition.name.endsWith(`__${name}`));
  if (matches.length) {
    const listed = matches.map((tool) => `${tool.definition.name}${tool.upstream ? ` (${tool.upstream.server})` : ''}`).join(', ');
    return `There is no tool named "${name}". Tools of this place's connections go by their full names: ${listed}. Call ${matches.length === 1 ? 'it' : 'one'} by that name.`;
  }
  const look = (await searching(tools.length)) ? `Find tools with ${SEARCH_TOOLS}` : 'List the tools to see what this server offers';
  return `There is no tool named "${name}". ${look}.`;
}

async function findIn(sources: ToolSource[], name: string): Promise<SessionTool | undefined> {
  for (const source of sources) {
    const tool = (await source.tools()).find((t) => t.definition.name === name);
    if (tool) return tool;
  }
  return undefined;
}
