import { inertDescription, inertLine, MAX_NAME, MAX_TITLE } from '../upstream-text.js';
import type { UpstreamTool } from './upstream-connection.js';

/**
 * The most one connection's tools may take (their JSON, after cleaning): a place's tools/list carries
 * every connection's tools at once, and agents read it whole. About 60 tools with descriptions at
 * their cap; real servers list far less.
 */
export const MAX_LISTING = 512_000;

/** An upstream listed more than a place's tools/list can carry. */
export class ListingTooLargeError extends Error {
  override readonly name = 'ListingTooLargeError';
  constructor(readonly count: number) {
    super(
      `its tools take more than ${MAX_LISTING / 1000} KB (${count} tools listed by then), more than one connection may add to a place's tools/list, ` +
        "so none is offered. Ask the server's maker for a shorter list, or connect a narrower server of the same provider.",
    );
  }
}

// Values the schema's user gives or compares against: kept exactly as the upstream wrote them.
const SCHEMA_DATA = new Set(['const', 'default', 'enum', 'examples']);

/**
 * An upstream's tools as read, page by page, made inert (upstream-text.ts: names, titles and
 * descriptions, also those inside the schemas) and bounded in size. Each name is the first tool's of
 * that name after cleaning; `upstreamName` gives the name the server itself uses, for calls.
 */
export class UpstreamListing {
  readonly tools: UpstreamTool[] = [];
  private readonly upstreamNames = new Map<string, string>();
  private size = 0;

  /** Adds a page of the upstream's tools; throws ListingTooLargeError once they take more than MAX_LISTING. */
  add(page: readonly UpstreamTool[]): void {
    for (const raw of page) {
      const tool = inertTool(raw);
      if (!tool.name || this.upstreamNames.has(tool.name)) continue;
      this.size += JSON.stringify(tool).length;
      if (this.size > MAX_LISTING) throw new ListingTooLargeError(this.tools.length);
      this.upstreamNames.set(tool.name, raw.name);
      this.tools.push(tool);
    }
  }

  /** The name the upstream gave the tool listed here as `name`. */
  upstreamName(name: string): string | undefined {
    return this.upstreamNames.get(name);
  }
}

function inertTool(tool: UpstreamTool): UpstreamTool {
  const { name, title, description, inputSchema, outputSchema, annotations } = tool;
  return {
    ...tool,
    name: inertLine(String(name), MAX_NAME),
    ...(typeof title === 'string' && { title: inertLine(title, MAX_TITLE) }),
    ...(typeof description === 'string' && { description: inertDescription(description) }),
    inputSchema: inertSchema(inputSchema) as UpstreamTool['inputSchema'],
    ...(outputSchema && { outputSchema: inertSchema(outputSchema) as NonNullable<UpstreamTool['outputSchema']> }),
    ...(annotations &&
      typeof annotations.title === 'string' && { annotations: { ...annotations, title: inertLine(annotations.title, MAX_TITLE) } }),
  };
}

/** A JSON Schema with its `title` and `description` texts made inert, everything else as it was. */
function inertSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inertSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => {
      if (key === 'title' && typeof value === 'string') return [key, inertLine(value, MAX_TITLE)];
      if (key === 'description' && typeof value === 'string') return [key, inertDescription(value)];
      return [key, SCHEMA_DATA.has(key) ? value : inertSchema(value)];
    }),
  );
}
