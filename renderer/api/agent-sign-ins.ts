import { queryOptions } from '@tanstack/react-query';
import type { PendingSignIn, SignedInClientInfo } from '../../common/agent-sign-ins.js';
import { api } from './client';

// Query options and calls for agent sign-ins: the requests waiting for the owner, and the clients signed in.

export type { PendingSignIn, SignedInClientInfo };

/** How often the page looks for new requests: a client's browser is waiting on them. */
const WAITING_POLL_MS = 2_000;
const CLIENTS_POLL_MS = 3_000;

export const waitingSignInsQuery = queryOptions({
  queryKey: ['agent-sign-ins'],
  queryFn: () => api<{ requests: PendingSignIn[] }>('GET', '/agent-access/sign-ins'),
  refetchInterval: WAITING_POLL_MS,
});

export const signedInClientsQuery = queryOptions({
  queryKey: ['agent-clients'],
  queryFn: () => api<{ clients: SignedInClientInfo[] }>('GET', '/agent-access/clients'),
  // A client appears once it has traded its code, a moment after it was allowed; `last used` moves too.
  refetchInterval: CLIENTS_POLL_MS,
});

export const approveSignIn = (code: string, workspacePath: string) =>
  api<{ approved: PendingSignIn }>('POST', `/agent-access/sign-ins/${encodeURIComponent(code)}/approve`, { workspace_path: workspacePath === '' ? '.' : workspacePath });

export const denySignIn = (code: string) => api<{ denied: PendingSignIn }>('POST', `/agent-access/sign-ins/${encodeURIComponent(code)}/deny`, {});

export const revokeClient = (id: string) => api<{ revoked: SignedInClientInfo }>('POST', `/agent-access/clients/${encodeURIComponent(id)}/revoke`, {});
