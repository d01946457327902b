/** A place as the page and the CLI show it. */
export interface PlaceRef {
  /** Relative to the workspace root; '' is This machine. */
  root: string;
  label: string;
}

/** A client's sign-in waiting for the owner (GET /api/agent-sign-ins). */
export interface PendingSignIn {
  /** The short code the client's browser shows too: the owner checks they match. */
  code: string;
  clientName: string;
  /** Where the answer (the authorization code) will be sent. */
  redirectUri: string;
  /** The place the client asked for; absent when it named none (the owner picks). */
  askedPlace?: PlaceRef;
  /** The place as the client named it, when it is no place of this machine. */
  askedPath?: string;
  /** The network address the client's browser came from. */
  from?: string;
  /** When it asked. */
  createdAt: string;
  expiresAt: string;
}

/** A client that signed in with OAuth (GET /api/agent-clients). */
export interface SignedInClientInfo {
  /** This sign-in's id (what `clients revoke` takes). */
  id: string;
  /** The client's OAuth client_id: two clients with one name differ here. */
  clientId: string;
  /** The name the client gave itself. */
  name: string;
  /** Where its sign-in's answer went; absent for sign-ins recorded before it was kept. */
  redirectUri?: string;
  place: PlaceRef;
  approvedAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
  revokedWhy?: string;
}
