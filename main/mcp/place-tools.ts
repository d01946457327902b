import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from '../connections/gateway/gateway.js';
import type { ConnectionHealth } from '../connections/gateway/connection-health.js';
import type { UpstreamProgress, UpstreamTool } from '../connections/gateway/upstream-connection.js';
import { UpstreamUnavailableError } from '../connections/gateway/upstream-unavailable-error.js';
import type { PlaceConnections } from '../connections/place-connections.js';
import { gatewayToolNames, isPersonalShapedName } from '../connections/store/naming.js';
import { ToolArguments } from '../connections/gateway/tool-arguments.js';
import type { PlaceConnection } from '../connections/store/connection-store.js';
import type { Place } from '../places/place-root.js';
import { searchHint } from '../connections/tool-search/search-hint.js';
import { toolError, type SessionTool, type ToolExtra } from './session-tool.js';
import type { ConnectionToolName, ToolSource } from './tool-table.js';
import { waitAtMost } from '../connections/gateway/wait-at-most.js';

/** Read by clients with a tool search of their own (Claude Code) to find a deferred tool. */
const SEARCH_HINT_KEY = 'anthropic/searchHint';

export interface PlaceToolsDeps {
  connections: PlaceConnections;
  gateway: Gateway;
  health: ConnectionHealth;
  /** What the catalog says a connector does, for the tools' search hints. */
  catalogDescription: (catalogId: string) => string | undefined;
  /** Told once per connection and cause when an upstream's tools cannot be listed. */
  report: (message: string) => void;
}

/** Shared by every session: each upstream schema is compiled once, on its first call. */
const toolArguments = new ToolArguments();

/** How long tools/list waits for the first check of a connection never checked before answering without it. */
const FIRST_CHECK_WAIT_MS = 700;

/**
 * The tools of a place's usable connections, as `<server>__<tool>`. Usability (the adder can still
 * edit the place, the credentials exist) is checked on every list and every call; whether the
 * server works is its measured health, never asked here: a connection whose last check failed
 * has no tools (its re-checks run on their own, with backoff), and one being checked again keeps
 * its last good list. Only a connection never checked is waited for, briefly, so tools/list
 * answers within a second whatever the servers do; sessions hear when tools come or go.
 */
export class PlaceTools implements ToolSource {
  private readonly reported = new Set<string>();
  /** Each connection's tools as last made, with the upstream list they were made from (every call looks its tool up). */
  private readonly made = new Map<string, { connection: PlaceConnection; upstream: readonly UpstreamTool[]; tools: SessionTool[] }>();

  constructor(
    private readonly place: Place,
    private readonly deps: PlaceToolsDeps,
  ) {}

  async tools(): Promise<SessionTool[]> {
    const usable = await this.deps.connections.usable(this.place);
    const first = usable.filter((c) => !this.deps.health.health(c).last).map((c) => this.deps.health.check(c));
    if (first.length) await waitAtMost(Promise.all(first), FIRST_CHECK_WAIT_MS);
    return usable.flatMap((connection) => this.toolsOf(connection));
  }

  async explainUnknown(name: string): Promise<{ reason: string; connection?: ConnectionToolName } | undefined> {
    if (!isPersonalShapedName(name)) return undefined;
    const server = /^(u[0-9a-f]{8}__[a-z0-9-]+)__/.exec(name)?.[1];
    const known = server ? await this.deps.connections.stateOf(this.place, server) : undefined;
    const tool = server && name.slice(server.length + 2);
    const reason = this.unknownReason(name, known, tool);
    return { reason, ...(known && tool && { connection: { name: known.displayName, tool } }) };
  }

  private unknownReason(
    name: string,
    known: Awaited<ReturnType<PlaceToolsDeps['connections']['stateOf']>>,
    tool: string | undefined,
  ): string {
    if (tool && known?.disabledTools?.includes(tool)) {
      return `errPlaceMCPUnavailable: "${name}" was turned off for ${this.place.label} in the connection "${known.displayName}". The person who added it or an editor of the place can turn it on again.`;
    }
    if (known && known.state !== 'connected') {
      return `errPlaceMCPUnavailable: "${name}" belongs to the connection "${known.displayName}" of ${this.place.label}, which does not work now (${known.state}): ${known.reason ?? ''}`.trim();
    }
    return (
      `errPlaceMCPUnavailable: "${name}" is not a tool of any MCP connection of ${this.place.label} that works now. ` +
      "It may belong to another place, have been removed, or be paused; find this place's tools in tools/list (or with search_tools where it is listed), and its connections with manage_my_mcp_servers."
    );
  }

  private toolsOf(connection: PlaceConnection): SessionTool[] {
    const key = `${connection.storeId}/${connection.name}`;
    const last = this.deps.health.health(connection).last;
    if (last?.kind !== 'ok') {
      if (last && !this.reported.has(last.reason)) {
        this.reported.add(last.reason);
        this.deps.report(last.reason);
      }
      return [];
    }
    this.reported.clear();
    const made = this.made.get(key);
    if (made?.connection === connection && made.upstream === last.tools) return made.tools;
    const hint = searchHint(connection.displayName, this.deps.catalogDescription(connection.catalogId));
    const tools = connectionTools(connection, hint, last.tools, (tool, args, extra) => this.call(connection, tool, args, extra));
    this.made.set(key, { connection, upstream: last.tools, tools });
    return tools;
  }

  // The tool table finds a connection tool through tools(), which checked the connection's
  // usability for this very call: no second check here.
  private async call(
    connection: PlaceConnection,
    tool: UpstreamTool,
    args: Record<string, unknown> | undefined,
    extra: ToolExtra,
  ): Promise<CallToolResult> {
    const problems = toolArguments.problems(tool.inputSchema, args);
    if (problems.length) return toolError(mismatch(connection, tool, problems));
    const onProgress = progressRelay(extra);
    try {
      const result = await (
        await this.deps.gateway.upstream(connection)
      ).call(tool.name, args, { signal: extra.signal, ...(onProgress && { onProgress }) });
      return result as CallToolResult;
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) return toolError(error.message);
      throw error;
    }
  }
}

/**
 * A connection's upstream tools as a session offers them: named `<server>__<tool>` (see
 * gatewayToolNames), titled with the connection's name and the upstream's own, hinted for
 * clients' own tool search. Tools turned off in the place are neither listed nor callable; the
 * names are made over all of them, so that turning one off renames no other.
 */
export function connectionTools(
  connection: Pick<PlaceConnection, 'name' | 'displayName' | 'disabledTools'>,
  hint: string,
  upstream: readonly UpstreamTool[],
  call: (tool: UpstreamTool, args: Record<string, unknown> | undefined, extra: ToolExtra) => Promise<CallToolResult>,
): SessionTool[] {
  // Names are unique: the health check keeps the first of each.
  const names = gatewayToolNames(
    connection.name,
    upstream.map((tool) => tool.name),
  );
  const off = new Set<string>(connection.disabledTools);
  return upstream.flatMap((tool, i) =>
    off.has(tool.name)
      ? []
      : [
          {
            definition: {
              ...tool,
              name: names[i]!,
              title: titleOf(connection.displayName, tool),
              _meta: { ...tool._meta, [SEARCH_HINT_KEY]: hint },
            } as Tool,
            upstream: { tool: tool.name, server: connection.displayName, service: hint },
            call: (args: Record<string, unknown> | undefined, extra: ToolExtra) => call(tool, args, extra),
          },
        ],
  );
}

/** `GitHub: get_pull_request_reviews`, or with the upstream's own title `Google Calendar: List Events (list-events)`. */
function titleOf(server: string, tool: UpstreamTool): string {
  const own = tool.title ?? (typeof tool.annotations?.title === 'string' ? tool.annotations.title : undefined);
  return own && own !== tool.name ? `${server}: ${own} (${tool.name})` : `${server}: ${tool.name}`;
}

/** The answer to arguments that do not fit: what is wrong, and the schema to follow. */
function mismatch(connection: PlaceConnection, tool: UpstreamTool, problems: string[]): string {
  return (
    `The arguments for ${tool.name} (${connection.displayName}) do not fit its input schema, so it was not called: ${problems.join('; ')}.\n` +
    `Call it again with arguments that follow this input schema:\n${JSON.stringify(tool.inputSchema)}`
  );
}

/** Forwards an upstream's progress to the agent, under the agent's own progress token. */
function progressRelay(extra: ToolExtra): ((progress: UpstreamProgress) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return (p) => {
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken,
          progress: p.progress,
          ...(p.total !== undefined && { total: p.total }),
          ...(p.message !== undefined && { message: p.message }),
        },
      })
      .catch(() => {});
  };
}
