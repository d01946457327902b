import { queryOptions } from '@tanstack/react-query';
import { createdTokenAnswer, revokedTokenAnswer, tokenAnswer, tokensAnswer, type AgentToken, type CreatedToken } from '../../common/api/agent-tokens.js';
import { placeToolSearchAnswer, type PlaceToolSearch, type ToolSearchMode } from '../../common/api/places.js';
import { api, query } from './client';

// Query options and calls of the Agent access screen: the app's own agent tokens.

export type { AgentToken, CreatedToken, PlaceToolSearch, ToolSearchMode };

export interface NewToken {
  name: string;
  /** `<n>m|h|d` or `never`. */
  expires: string;
  /** A place's root; absent for any place. */
  workspacePath?: string;
}

export const tokensQuery = queryOptions({
  queryKey: ['tokens'],
  queryFn: () => api('GET', '/tokens', tokensAnswer),
});

export const createToken = (input: NewToken) =>
  api('POST', '/tokens', createdTokenAnswer, {
    name: input.name,
    expires: input.expires,
    ...(input.workspacePath !== undefined && { workspace_path: input.workspacePath }),
  });

export const revokeToken = (id: string) => api('DELETE', `/tokens/${encodeURIComponent(id)}`, revokedTokenAnswer);

export const setTokenToolSearch = (id: string, mode: ToolSearchMode) => api('PUT', `/tokens/${encodeURIComponent(id)}/tool-search`, tokenAnswer, { mode });

export const toolSearchQuery = (root: string) =>
  queryOptions({
    queryKey: ['tool-search', root],
    queryFn: () => api('GET', `/tool-search${query({ workspace_path: root })}`, placeToolSearchAnswer),
  });

export const setPlaceToolSearch = (root: string, mode: ToolSearchMode) => api('PUT', '/access/places/tool-search', placeToolSearchAnswer, { workspace_path: root, mode });
