import { queryOptions } from '@tanstack/react-query';
import type { AuthMode, ServerInfo } from '../../common/server-info.js';
import { api, query } from './client';

// Query options and calls of the Server screen: the agent endpoint's state, Start/Stop, recent activity.

export type { AuthMode, ServerInfo };

/** One tool call from the audit log (main/audit/audit-log.ts). Never arguments, contents or results. */
export interface ActivityRecord {
  time: string;
  tool: string;
  /** The token's subject: `token:<id>` for the app's own tokens, else the platform's user id. */
  caller: string;
  /** The OAuth client's name, for a client that signed in (its caller is `grant:<id>`). */
  client?: string;
  /** The place's root; `""` is This machine. */
  place?: string;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'cancelled';
  error?: string;
  /** A connection's tool: the connection's name and the upstream's own name for the tool. */
  connection?: { name: string; tool: string };
}

export const ACTIVITY_LIMIT = 50;

export function serverQuery(options: { polling: boolean }) {
  return queryOptions({
    queryKey: ['server'],
    queryFn: () => api<ServerInfo>('GET', '/server'),
    // The tray (or the CLI's signals) can start and stop it too: look again while the screen is open.
    refetchInterval: options.polling ? 3000 : false,
  });
}

/** Polled while the Server screen is open: new tool calls appear without a reload. */
export const activityQuery = queryOptions({
  queryKey: ['activity'],
  queryFn: () => api<{ records: ActivityRecord[] }>('GET', `/activity${query({ limit: String(ACTIVITY_LIMIT) })}`),
  refetchInterval: 2000,
});

export const startServer = () => api<ServerInfo>('POST', '/server/start');
export const stopServer = () => api<ServerInfo>('POST', '/server/stop');
