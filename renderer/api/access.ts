import { queryOptions } from '@tanstack/react-query';
import { api } from './client';

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
