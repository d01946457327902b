import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** Something that can tell when a resource's content changed. */
export interface ChangeSource {
  subscribe(listener: () => void): () => void;
}

/** A set of listeners, for one kind of change. */
export class Changes implements ChangeSource {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(): void {
    for (const listener of this.listeners) listener();
  }
}

/**
 * resources/subscribe for the given resources: a session that subscribed gets
 * notifications/resources/updated (on its GET stream) when one changes.
 */
export function enableResourceSubscriptions(server: McpServer, sources: Record<string, ChangeSource>): void {
  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  const known = (uri: string) => {
    if (!(uri in sources)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot subscribe to ${uri}. Resources with updates: ${Object.keys(sources).join(', ')}.`,
      );
    }
    return uri;
  };
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    subscribed.add(known(request.params.uri));
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });
  const stops = Object.entries(sources).map(([uri, source]) =>
    source.subscribe(() => {
      if (subscribed.has(uri)) void server.server.sendResourceUpdated({ uri }).catch(() => {});
    }),
  );
  const previous = server.server.onclose;
  server.server.onclose = () => {
    for (const stop of stops) stop();
    previous?.();
  };
}
