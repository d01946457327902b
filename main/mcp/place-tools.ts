import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Gateway } from '../connections/gateway/gateway.js';
import { UpstreamUnavailableError, type UpstreamProgress } from '../connections/gateway/upstream-connection.js';
import type { PlaceConnections } from '../connections/place-connections.js';
import { gatewayToolName, isPersonalShapedName } from '../connections/store/naming.js';
import type { PlaceConnection } from '../connections/store/connection-store.js';
import type { Place } from '../places/place-root.js';
import { searchHint } from '../connections/tool-search/search-hint.js';
import { toolError, type SessionTool, type ToolExtra } from './session-tool.js';
import type { ToolSource } from './tool-table.js';

/** Read by clients with a tool search of their own (Claude Code) to find a deferred tool. */
const SEARCH_HINT_KEY = 'anthropic/searchHint';

export interface PlaceToolsDeps {
  connections: PlaceConnections;
  gateway: Gateway;
  /** What the catalog says a connector does, for the tools' search hints. */
  catalogDescription: (catalogId: string) => string | undefined;
  /** Told once per connection and cause when an upstream's tools cannot be listed. */
  report: (message: string) => void;
}

/**
 * The tools of a place's usable connections, as `<server>__<tool>`. Usability (the adder can still
 * edit the place, the credentials exist) is checked on every list and every call.
 */
export class PlaceTools implements ToolSource {
  private readonly reported = new Set<string>();
  /**
   * Each connection's tools as last listed, with the record and upstream list they were made from:
   * reused while both are the same (every call looks its tool up), kept while an upstream fails for
   * a moment, so that calls say why.
   */
  private readonly lastKnown = new Map<string, { connection: PlaceConnection; upstream: readonly Tool[]; tools: SessionTool[] }>();

  constructor(
    private readonly place: Place,
    private readonly deps: PlaceToolsDeps,
  ) {}

  async tools(): Promise<SessionTool[]> {
    const usable = await this.deps.connections.usable(this.place);
    const lists = await Promise.all(usable.map((connection) => this.toolsOf(connection)));
    return lists.flat();
  }

  explainUnknown(name: string): string | undefined {
    if (!isPersonalShapedName(name)) return undefined;
    return (
      `errPlaceMCPUnavailable: "${name}" is not a tool of any MCP connection of ${this.place.label} that works now. ` +
      'It may belong to another place, have been removed, or be paused; list the tools, or use manage_my_mcp_servers to see this place\'s connections.'
    );
  }

  private async toolsOf(connection: PlaceConnection): Promise<SessionTool[]> {
    const key = `${connection.storeId}/${connection.name}`;
    const known = this.lastKnown.get(key);
    let upstream;
    try {
      upstream = await this.deps.gateway.upstream(connection).tools();
    } catch (error) {
      // One broken upstream affects only its own tools; the agent still gets everything else.
      const message = (error as Error).message;
      if (!this.reported.has(message)) {
        this.reported.add(message);
        this.deps.report(message);
      }
      return known?.tools ?? [];
    }
    this.reported.clear();
    if (known?.connection === connection && known.upstream === upstream) return known.tools;
    const hint = searchHint(connection.displayName, this.deps.catalogDescription(connection.catalogId));
    const tools = upstream.map((tool) => ({
      definition: { ...tool, name: gatewayToolName(connection.name, tool.name), _meta: { ...tool._meta, [SEARCH_HINT_KEY]: hint } } as Tool,
      service: hint,
      call: (args: Record<string, unknown> | undefined, extra: ToolExtra) => this.call(connection, tool.name, args, extra),
    }));
    this.lastKnown.set(key, { connection, upstream, tools });
    return tools;
  }

  // The tool table finds a connection tool through tools(), which checked the connection's
  // usability for this very call: no second check here.
  private async call(connection: PlaceConnection, tool: string, args: Record<string, unknown> | undefined, extra: ToolExtra): Promise<CallToolResult> {
    const onProgress = progressRelay(extra);
    try {
      const result = await this.deps.gateway.upstream(connection).call(tool, args, { signal: extra.signal, ...(onProgress && { onProgress }) });
      return result as CallToolResult;
    } catch (error) {
      if (error instanceof UpstreamUnavailableError) return toolError(error.message);
      throw error;
    }
  }
}

/** Forwards an upstream's progress to the agent, under the agent's own progress token. */
function progressRelay(extra: ToolExtra): ((progress: UpstreamProgress) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return (p) => {
    void extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress: p.progress, ...(p.total !== undefined && { total: p.total }), ...(p.message !== undefined && { message: p.message }) } })
      .catch(() => {});
  };
}
