import * as z from 'zod';

// Agents signing in to this server, as the API gives them (/api/agent-access) and the CLI and tray show them.

/** A place as the page and the CLI show it. */
export const placeRef = z.object({
  /** Relative to the workspace root; '' is This machine. */
  root: z.string(),
  label: z.string(),
});
export type PlaceRef = z.infer<typeof placeRef>;

/** A client's sign-in waiting for the owner. */
export const waitingAgentSignIn = z.object({
  /** The short code the client's browser shows too: the owner checks they match. */
  code: z.string(),
  clientName: z.string(),
  /** Where the answer (the authorization code) will be sent. */
  redirectUri: z.string(),
  /** The place the client asked for; absent when it named none (the owner picks). */
  askedPlace: placeRef.optional(),
  /** The place as the client named it, when it is no place of this machine. */
  askedPath: z.string().optional(),
  /** The network address the client's browser came from. */
  from: z.string().optional(),
  /** When it asked. */
  createdAt: z.string(),
  expiresAt: z.string(),
});
export type WaitingAgentSignIn = z.infer<typeof waitingAgentSignIn>;

/** A client that signed in with OAuth. */
export const signedInClient = z.object({
  /** This sign-in's id (what `clients revoke` takes). */
  id: z.string(),
  /** The client's OAuth client_id: two clients with one name differ here. */
  clientId: z.string(),
  /** The name the client gave itself. */
  name: z.string(),
  /** Where its sign-in's answer went; absent for sign-ins recorded before it was kept. */
  redirectUri: z.string().optional(),
  place: placeRef,
  approvedAt: z.string(),
  lastUsedAt: z.string().optional(),
  revokedAt: z.string().optional(),
  revokedWhy: z.string().optional(),
});
export type SignedInClientInfo = z.infer<typeof signedInClient>;

/** GET /api/agent-access/sign-ins */
export const waitingAgentSignInsAnswer = z.object({ requests: z.array(waitingAgentSignIn) });
/** GET /api/agent-access/clients */
export const signedInClientsAnswer = z.object({ clients: z.array(signedInClient) });
/** POST /api/agent-access/sign-ins/:code/approve; the place picked, if not the one asked for. */
export const approveBody = z.object({ workspace_path: z.string().max(4096).optional() }).strict();
export const approvedAnswer = z.object({ approved: waitingAgentSignIn.extend({ approvedPlace: placeRef }) });
export const deniedAnswer = z.object({ denied: waitingAgentSignIn });
export const revokedClientAnswer = z.object({ revoked: signedInClient });
/** The answers and revocations take no fields. */
export const emptyBody = z.object({}).strict();
