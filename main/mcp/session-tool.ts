import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A tool as one MCP session offers it: its wire definition and how to call it. */
export interface SessionTool {
  definition: Tool;
  /** A connection tool's own words: the upstream's name for it, the connection's name, and what the service does (the search hint). */
  upstream?: { tool: string; server: string; service: string };
  /** `args` as the client sent them; the tool validates them. */
  call(args: Record<string, unknown> | undefined, extra: ToolExtra): Promise<CallToolResult>;
}

export interface LocalToolSpec<I extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: I;
  output?: z.ZodRawShape;
  annotations: NonNullable<Tool['annotations']>;
  _meta?: Tool['_meta'];
  handler: (args: z.infer<z.ZodObject<I>>, extra: ToolExtra) => Promise<CallToolResult>;
}

/** A tool implemented here: its arguments are checked against the zod shape before the handler runs. */
export function defineTool<I extends z.ZodRawShape>(spec: LocalToolSpec<I>): SessionTool {
  const input = z.object(spec.input);
  const definition: Tool = {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: jsonSchemaOf(input) as Tool['inputSchema'],
    ...(spec.output && { outputSchema: jsonSchemaOf(z.object(spec.output)) as Tool['outputSchema'] }),
    annotations: spec.annotations,
    ...(spec._meta && { _meta: spec._meta }),
  };
  return {
    definition,
    call: async (args, extra) => {
      const parsed = input.safeParse(args ?? {});
      if (!parsed.success) {
        return toolError(`Invalid arguments for ${spec.name}: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}. See the tool's input schema.`);
      }
      return spec.handler(parsed.data, extra);
    },
  };
}

/**
 * Asks clients that defer tools behind their own tool search (Claude Code) to load this one on
 * every turn; other clients ignore the key.
 */
export const ALWAYS_LOAD: NonNullable<Tool['_meta']> = { 'anthropic/alwaysLoad': true };

export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  // Input schemas describe what a client may send: optional fields stay optional.
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return json;
}
