import { queryOptions } from '@tanstack/react-query';
import { api, query } from './client';
import type { ClientFiles, ClientId, WrittenClientEntry } from './types';

// Query options and calls of the Agent access screen: the app's own agent tokens.

/** What the page sees of a token: never the token itself (main/auth/token-file.ts). */
export interface AgentToken {
  id: string;
  name: string;
  createdAt: string;
  expiresAt?: string;
  /** The place the token is bound to; absent: the agent names one in the URL, else This machine. */
  workspacePath?: string;
  revokedAt?: string;
  /** The token's own tool search setting; absent follows its place (auto). */
  toolSearch?: 'on' | 'off';
}

export type ToolSearchMode = 'on' | 'off' | 'auto';

/** Tool search in a place, as measured now (main/http/agent-endpoint.ts placeToolSearch). */
export interface PlaceToolSearch {
  workspace_path: string;
  label: string;
  /** The place's own setting. */
  mode: ToolSearchMode;
  /** How many tools an agent there would list without tool search. */
  toolCount: number;
  threshold: number;
  /** Whether agents there get search_tools and call_tool (for tokens without a setting of their own). */
  on: boolean;
  by: 'token' | 'place' | 'automatic';
}

/** The answer to a creation: the one time the token is shown. */
export interface CreatedToken extends AgentToken {
  token: string;
}

export interface NewToken {
  name: string;
  /** `<n>m|h|d` or `never`. */
  expires: string;
  /** A place's root; absent for any place. */
  workspacePath?: string;
}

export const tokensQuery = queryOptions({
  queryKey: ['tokens'],
  queryFn: () => api<{ tokens: AgentToken[] }>('GET', '/tokens'),
});

export const createToken = (input: NewToken) =>
  api<{ token: CreatedToken }>('POST', '/tokens', {
    name: input.name,
    expires: input.expires,
    ...(input.workspacePath !== undefined && { workspace_path: input.workspacePath }),
  });

export const revokeToken = (id: string) => api<{ revoked: AgentToken }>('DELETE', `/tokens/${encodeURIComponent(id)}`);

export const setTokenToolSearch = (id: string, mode: ToolSearchMode) =>
  api<{ token: AgentToken }>('PUT', `/tokens/${encodeURIComponent(id)}/tool-search`, { mode });

export const toolSearchQuery = (root: string) =>
  queryOptions({
    queryKey: ['tool-search', root],
    queryFn: () => api<PlaceToolSearch>('GET', `/tool-search?workspace_path=${encodeURIComponent(root)}`),
  });

export const setPlaceToolSearch = (root: string, mode: ToolSearchMode) =>
  api<PlaceToolSearch>('PUT', '/access/places/tool-search', { workspace_path: root, mode });

/** Where each MCP client's entry for this server would go: the person's own file, and the place folder's. */
export const clientFilesQuery = (root: string) =>
  queryOptions({
    queryKey: ['client-files', root],
    queryFn: () => api<ClientFiles>('GET', `/client-configs${query({ workspace_path: root })}`),
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
  api<WrittenClientEntry>('POST', '/client-configs', { workspace_path: input.workspacePath, client: input.client, scope: input.scope, auth: input.auth, replace: input.replace });
