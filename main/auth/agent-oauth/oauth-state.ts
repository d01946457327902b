import { join } from 'node:path';
import * as z from 'zod';
import { VersionedJsonFile } from '../../state/versioned-json-file.js';

export const OAUTH_STATE_FILE = 'agent-sign-ins.json';

const iso = z.iso.datetime();
const hash = z.string().regex(/^[0-9a-f]{64}$/);

/** A client that registered itself (RFC 7591). Public clients only: PKCE is their proof, there is no secret. */
const clientSchema = z.object({
  client_id: z.string().min(1),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  redirect_uris: z.array(z.string()).min(1),
  client_id_issued_at: z.number().int(),
  registeredAt: iso,
});

/** A sign-in waiting for, or answered by, the machine's owner. The browser polls it by a key whose hash is kept here. */
const requestSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  keyHash: hash,
  /** What the owner types or reads: `ABCD-EFGH`. */
  code: z.string().regex(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/),
  clientId: z.string(),
  clientName: z.string(),
  redirectUri: z.string(),
  /** The place the client asked for (the `workspace_path` of its resource URL); absent: none named. */
  askedPlace: z.string().optional(),
  resource: z.string(),
  codeChallenge: z.string(),
  state: z.string().optional(),
  scopes: z.array(z.string()),
  /** The network address the sign-in's browser came from, for the owner to check. */
  from: z.string().max(100).optional(),
  createdAt: iso,
  expiresAt: iso,
  decision: z
    .object({
      outcome: z.enum(['approved', 'denied']),
      /** The place the owner approved ('' is This machine). */
      place: z.string().optional(),
      at: iso,
      by: z.string(),
    })
    .optional(),
  /** When the browser was sent back to the client with the answer; the answer goes out once. */
  deliveredAt: iso.optional(),
});

/** A client the owner let in: one place, one audience, a rotating refresh token. */
const grantSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  clientId: z.string(),
  clientName: z.string(),
  /** The approved place's root ('' is This machine). */
  place: z.string(),
  resource: z.string(),
  /** Where the sign-in's answer went (absent in grants recorded before it was kept). */
  redirectUri: z.string().optional(),
  approvedAt: iso,
  lastUsedAt: iso.optional(),
  revokedAt: iso.optional(),
  /** Why it was revoked, for the list: by the owner, or a reused refresh token or code. */
  revokedWhy: z.string().optional(),
  refreshHash: hash,
  refreshExpiresAt: iso,
  /** Refresh tokens already rotated away: presenting one again means it leaked, and ends the grant. */
  rotatedHashes: z.array(hash),
});

const oauthStateSchema = z.object({
  version: z.literal(1),
  clients: z.array(clientSchema),
  requests: z.array(requestSchema),
  grants: z.array(grantSchema),
});

export type RegisteredClient = z.infer<typeof clientSchema>;
export type SignInRequest = z.infer<typeof requestSchema>;
export type Grant = z.infer<typeof grantSchema>;
export type OAuthState = z.infer<typeof oauthStateSchema>;

/** `<stateDir>/agent-sign-ins.json`: written by the server and the CLI (approve, deny, revoke) under one lock. */
export function oauthStateFile(stateDir: string): VersionedJsonFile<OAuthState> {
  return new VersionedJsonFile({
    path: join(stateDir, OAUTH_STATE_FILE),
    version: 1,
    schema: oauthStateSchema,
    empty: { version: 1, clients: [], requests: [], grants: [] },
    title: 'The agent sign-in file',
  });
}
