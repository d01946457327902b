import { queryOptions } from '@tanstack/react-query';
import {
  createdTokenAnswer,
  revokedTokenAnswer,
  tokenAnswer,
  tokensAnswer,
  type AgentToken,
  type CreatedToken,
} from '../../common/api/agent-tokens.js';
import {
  clientFilesAnswer,
  writtenClientEntry,
  type ClientFiles,
  type ClientId,
  type WrittenClientEntry,
} from '../../common/api/client-configs.js';
import { placeToolSearchAnswer, type PlaceToolSearch, type ToolSearchMode } from '../../common/api/places.js';
import { api, query } from './client';

// Query options and calls of the Agent access screen: the app's own agent tokens.

export type { AgentToken, ClientFiles, ClientId, CreatedToken, PlaceToolSearch, ToolSearchMode, WrittenClientEntry };

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

export const setTokenToolSearch = (id: string, mode: ToolSearchMode) =>
  api('PUT', `/tokens/${encodeURIComponent(id)}/tool-search`, tokenAnswer, { mode });

export const toolSearchQuery = (root: string) =>
  queryOptions({
    queryKey: ['tool-search', root],
    queryFn: () => api('GET', `/tool-search${query({ workspace_path: root })}`, placeToolSearchAnswer),
  });

export const setPlaceToolSearch = (root: string, mode: ToolSearchMode) =>
  api('PUT', '/access/places/tool-search', placeToolSearchAnswer, { workspace_path: root, mode });

/** Where each MCP client's entry for this server would go: the person's own file, and the place folder's. */
export const clientFilesQuery = (root: string) =>
  queryOptions({
    queryKey: ['client-files', root],
    queryFn: () => api('GET', `/client-configs${query({ workspace_path: root })}`, clientFilesAnswer),
  });

export interface WriteClientEntry {
  client: ClientId;
  workspacePath: string;
  scope: 'user' | 'project';
  auth: 'token' | 'oauth';
  replace: boolean;
}

/** This server's entry written into a client's configuration (the rest of the file kept, a backup beside it). */
export const writeClientEntry = (input: WriteClientEntry) =>
  api('POST', '/client-configs', writtenClientEntry, {
    workspace_path: input.workspacePath,
    client: input.client,
    scope: input.scope,
    auth: input.auth,
    replace: input.replace,
  });
