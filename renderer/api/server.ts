import { queryOptions } from '@tanstack/react-query';
import { activityAnswer, serverInfo, type ActivityRecord, type AuthMode, type ServerInfo } from '../../common/api/server.js';
import { api, query } from './client';

// Query options and calls of the Server screen: the agent endpoint's state, Start/Stop, recent activity.

export type { ActivityRecord, AuthMode, ServerInfo };

export const ACTIVITY_LIMIT = 50;

export const serverQuery = queryOptions({
  queryKey: ['server'],
  queryFn: () => api('GET', '/server', serverInfo),
});

/** New tool calls appear as they are recorded (the server's change events). */
export const activityQuery = queryOptions({
  queryKey: ['activity'],
  queryFn: () => api('GET', `/activity${query({ limit: String(ACTIVITY_LIMIT) })}`, activityAnswer),
});

export const startServer = () => api('POST', '/server/start', serverInfo);
export const stopServer = () => api('POST', '/server/stop', serverInfo);
