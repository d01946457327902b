import { queryOptions } from '@tanstack/react-query';
import {
  approvedAnswer,
  deniedAnswer,
  waitingAgentSignInsAnswer,
  revokedClientAnswer,
  signedInClientsAnswer,
  type WaitingAgentSignIn,
  type SignedInClientInfo,
} from '../../common/api/agent-sign-ins.js';
import { api } from './client';

// Query options and calls for agent sign-ins: the requests waiting for the owner, and the clients signed in.
// Both change as agents ask and sign in: the server's change events say when (useChanges).

export type { WaitingAgentSignIn, SignedInClientInfo };

export const waitingSignInsQuery = queryOptions({
  queryKey: ['agent-sign-ins'],
  queryFn: () => api('GET', '/agent-access/sign-ins', waitingAgentSignInsAnswer),
});

export const signedInClientsQuery = queryOptions({
  queryKey: ['agent-clients'],
  queryFn: () => api('GET', '/agent-access/clients', signedInClientsAnswer),
});

export const approveSignIn = (code: string, workspacePath: string) =>
  api('POST', `/agent-access/sign-ins/${encodeURIComponent(code)}/approve`, approvedAnswer, {
    workspace_path: workspacePath === '' ? '.' : workspacePath,
  });

export const denySignIn = (code: string) => api('POST', `/agent-access/sign-ins/${encodeURIComponent(code)}/deny`, deniedAnswer, {});

export const revokeClient = (id: string) => api('POST', `/agent-access/clients/${encodeURIComponent(id)}/revoke`, revokedClientAnswer, {});
