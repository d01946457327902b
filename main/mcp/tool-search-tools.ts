import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { parameterText } from '../connections/tool-search/search-words.js';
import { type SearchableTool, ToolRanking } from '../connections/tool-search/tool-ranking.js';
import { ALWAYS_LOAD, defineTool, toolError, type SessionTool } from './session-tool.js';

export const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

const DEFAULT_MATCHES = 5;
const MAX_MATCHES = 20;
/** A description this long says what the tool does; longer ones are mostly examples. */
const MAX_DESCRIPTION_CHARS = 1000;

/** Every session offers these two tools: their inputs are defined once (see toolShape). */
const SEARCH_INPUT = {
  query: z.string().min(1).max(500).describe('A few words; naming the service helps.'),
  limit: z.number().int().min(1).max(MAX_MATCHES).optional().describe(`Matches to return (default ${DEFAULT_MATCHES}).`),
};
const CALL_INPUT = {
  name: z.string().min(1).describe('The tool name as search_tools gave it.'),
  arguments: z.record(z.string(), z.unknown()).optional().describe("Per the tool's input schema."),
};

interface Ranked extends SearchableTool {
  tool: SessionTool;
}

/**
 * search_tools: the place's connection tools that best match a few words, with their input
 * schemas, for clients that would otherwise receive more tools than they accept.
 */
export function searchToolsTool(connectionTools: () => Promise<SessionTool[]>): SessionTool {
  let last: { tools: SessionTool[]; ranking: ToolRanking<Ranked> } | undefined;
  // The tools' objects are kept while their connections don't change: the index is too.
  const rankingOf = (tools: SessionTool[]): ToolRanking<Ranked> => {
    if (last && last.tools.length === tools.length && last.tools.every((tool, i) => tool === tools[i])) return last.ranking;
    const ranking = new ToolRanking(tools.map(searchable));
    last = { tools, ranking };
    return ranking;
  };
  return defineTool({
    name: SEARCH_TOOLS,
    title: "Search this place's connection tools",
    description:
      'Find this place\'s connection tools by what you want to do ("create a Linear issue"): the best matches with their input schemas, to run with call_tool.',
    input: SEARCH_INPUT,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    _meta: ALWAYS_LOAD,
    handler: async (args) => {
      const ranking = rankingOf(await connectionTools());
      if (ranking.size === 0)
        return text('This place has no connection tools that work now. Use manage_my_mcp_servers to see or add its connections.');
      const matches = ranking.search(args.query, args.limit ?? DEFAULT_MATCHES);
      if (matches.length === 0) return text(`No connection tool matches "${args.query}". Try other words, or the service's name.`);
      const tools = matches.map(({ tool: { tool } }) => ({
        name: tool.definition.name,
        ...(tool.upstream && { server: tool.upstream.server, tool: tool.upstream.tool }),
        description: shorten(tool.definition.description ?? ''),
        inputSchema: tool.definition.inputSchema,
      }));
      return {
        content: [{ type: 'text', text: `Run one with call_tool (name, arguments):\n${JSON.stringify({ tools })}` }],
        structuredContent: { tools },
      };
    },
  });
}

/** call_tool's own definition; the tool table runs the named tool in its place, with every check of a direct call. */
export function callToolTool(): SessionTool {
  return defineTool({
    name: CALL_TOOL,
    title: 'Call a tool found with search_tools',
    description: "Run a tool search_tools found, by its full name, with arguments per its input schema: the tool's own answer.",
    input: CALL_INPUT,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    _meta: ALWAYS_LOAD,
    // Reached only when the table could not read a target from the arguments.
    handler: async () => toolError('call_tool needs name (a tool name from search_tools) and arguments (an object).'),
  });
}

/** The tool call_tool names and its arguments, or why the arguments say none. */
export function callToolTarget(
  args: Record<string, unknown> | undefined,
): { name: string; arguments: Record<string, unknown> | undefined } | { error: string } {
  const name = args?.name;
  const targetArgs = args?.arguments;
  if (typeof name !== 'string' || name.length === 0) return { error: 'call_tool needs name: a tool name as search_tools returned it.' };
  if (name === CALL_TOOL || name === SEARCH_TOOLS) return { error: `call_tool runs the tools search_tools finds; call ${name} directly.` };
  if (targetArgs !== undefined && (typeof targetArgs !== 'object' || targetArgs === null || Array.isArray(targetArgs))) {
    return { error: `call_tool needs arguments as an object, as ${name}'s input schema describes.` };
  }
  return { name, arguments: targetArgs as Record<string, unknown> | undefined };
}

function searchable(tool: SessionTool): Ranked {
  // The upstream's own name: `<connection>__` is a hash and an id, which the service's words say better.
  const { tool: name, service } = tool.upstream ?? { tool: tool.definition.name, service: '' };
  const readOnly = tool.definition.annotations?.readOnlyHint;
  return {
    name,
    description: tool.definition.description ?? '',
    service,
    parameters: parameterText(tool.definition.inputSchema),
    ...(typeof readOnly === 'boolean' && { readOnly }),
    tool,
  };
}

function shorten(description: string): string {
  return description.length <= MAX_DESCRIPTION_CHARS ? description : `${description.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}

function text(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }] };
}
