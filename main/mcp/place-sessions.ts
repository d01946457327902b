import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** The open MCP sessions of each place, so that a change to a place's tools reaches them. */
export class PlaceSessions {
  private readonly byRoot = new Map<string, Set<McpServer>>();

  /** Tracks `server` until it closes. */
  add(root: string, server: McpServer): void {
    let servers = this.byRoot.get(root);
    if (!servers) this.byRoot.set(root, (servers = new Set()));
    servers.add(server);
    const previous = server.server.onclose;
    server.server.onclose = () => {
      servers.delete(server);
      if (servers.size === 0 && this.byRoot.get(root) === servers) this.byRoot.delete(root);
      previous?.();
    };
  }

  /** Sends notifications/tools/list_changed to the sessions of these places (all places when omitted). */
  toolsChanged(roots?: Iterable<string>): void {
    const targets = roots ? [...roots].map((r) => this.byRoot.get(r)) : [...this.byRoot.values()];
    for (const servers of targets) {
      for (const server of servers ?? []) {
        if (server.isConnected()) server.sendToolListChanged();
      }
    }
  }
}
