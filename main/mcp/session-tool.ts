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

/** A tool's wire definition and argument check, without what runs it: the same for every session. */
export interface ToolShape<I extends z.ZodRawShape> {
  name: string;
  definition: Tool;
  input: z.ZodObject<I>;
}

/**
 * A tool's definition. Converting zod to JSON Schema is the costly part of opening a session
 * (milliseconds and tens of KiB per tool set): an input or output shape defined once (a module
 * constant) is converted once, and tools offered by every session keep one shape and bind their
 * handlers per session (`withHandler`).
 */
export function toolShape<I extends z.ZodRawShape>(spec: Omit<LocalToolSpec<I>, 'handler'>): ToolShape<I> {
  const input = compiled(spec.input);
  const definition: Tool = {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: input.json as Tool['inputSchema'],
    ...(spec.output && { outputSchema: compiled(spec.output).json as Tool['outputSchema'] }),
    annotations: spec.annotations,
    ...(spec._meta && { _meta: spec._meta }),
  };
  return { name: spec.name, definition, input: input.schema };
}

/** Each shape's zod object and JSON Schema, by the shape object they were made from. */
const compiledShapes = new WeakMap<z.ZodRawShape, { schema: z.ZodObject; json: Record<string, unknown> }>();

function compiled<I extends z.ZodRawShape>(shape: I): { schema: z.ZodObject<I>; json: Record<string, unknown> } {
  let entry = compiledShapes.get(shape);
  if (!entry) {
    const schema = z.object(shape);
    compiledShapes.set(shape, (entry = { schema, json: jsonSchemaOf(schema) }));
  }
  return entry as { schema: z.ZodObject<I>; json: Record<string, unknown> };
}

/** A session's tool of this shape: its arguments are checked against the zod shape before `handler` runs. */
export function withHandler<I extends z.ZodRawShape>(shape: ToolShape<I>, handler: LocalToolSpec<I>['handler']): SessionTool {
  return {
    definition: shape.definition,
    call: async (args, extra) => {
      const parsed = shape.input.safeParse(args ?? {});
      if (!parsed.success) {
        return toolError(
          `Invalid arguments for ${shape.name}: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}. See the tool's input schema.`,
        );
      }
      return handler(parsed.data, extra);
    },
  };
}

/** A tool implemented here: its arguments are checked against the zod shape before the handler runs. */
export function defineTool<I extends z.ZodRawShape>(spec: LocalToolSpec<I>): SessionTool {
  return withHandler(toolShape(spec), spec.handler);
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
