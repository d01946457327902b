import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { APP_TOKEN_ISSUER } from '../agent-tokens.js';
import { ClientMetadataDocuments } from './client-metadata-documents.js';
import { OAuthServerError, SignInRequestError, UnknownClientError } from './errors.js';
import { oauthStateFile, type Grant, type OAuthState, type RegisteredClient, type SignInRequest } from './oauth-state.js';
import { checkRedirectUri } from './redirect-uri.js';
import type { VersionedJsonFile } from '../../state/versioned-json-file.js';

/** A request the owner has not answered within this long is refused. */
export const APPROVAL_TTL_MS = 10 * 60_000;
/** An authorization code must be exchanged within this long, once. */
export const CODE_TTL_MS = 60_000;
/** Access tokens are short-lived: revocation ends them at once anyway, but a leaked one dies soon. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** A refresh token unused this long ends; each use starts the period again. */
export const REFRESH_TTL_MS = 30 * 86_400_000;
/** Registered clients kept at most; past it, the oldest that never signed in make room. */
export const MAX_CLIENTS = 500;
/** Rotated refresh tokens remembered per grant for reuse detection. */
const MAX_ROTATED = 20;
/** Answered or expired requests are kept this long, so a late approval is told why it failed. */
const REQUEST_KEEP_MS = 60 * 60_000;
/** `last used` is written at most this often per grant: it is not worth a file write per request. */
const TOUCH_EVERY_MS = 60_000;

/** The `sub` prefix of access tokens issued here, which tells them from the app's agent tokens. */
export const GRANT_SUBJECT_PREFIX = 'grant:';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export interface AuthorizeRequest {
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  /** The `resource` parameter (RFC 8707), if the client sent one. */
  resource?: string;
  scopes: string[];
  /** The network address the browser's request came from. */
  from?: string;
}

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

/** What the waiting browser is told: still waiting, or where to go now (the client, with a code or an error). */
export type WaitState =
  | { state: 'pending'; request: SignInRequest }
  | { state: 'answered'; outcome: 'approved' | 'denied' | 'expired'; redirect: string }
  | { state: 'gone'; message: string };

/** A signed-in client as the page and the CLI list it. */
export interface SignedInClient {
  id: string;
  clientId: string;
  name: string;
  place: string;
  /** Where the sign-in's answer went. */
  redirectUri?: string;
  approvedAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
  revokedWhy?: string;
}

export interface AuthorizationServerOptions {
  stateDir: string;
  /** The app's signing key (the one its agent tokens use). */
  signingKey: () => Promise<{ key: Uint8Array; keyId: string }>;
  /** Clients named by a metadata document URL; without it, such client_ids are unknown. */
  documents?: ClientMetadataDocuments;
  now?: () => number;
}

interface IssuedCode {
  clientId: string;
  requestId: string;
  codeChallenge: string;
  redirectUri: string;
  resource: string;
  place: string;
  clientName: string;
  expiresAt: number;
  /** Set once exchanged; a second exchange revokes what the first one got (RFC 6749 §4.1.2). */
  grantId?: string;
  used: boolean;
}

/**
 * The app as an OAuth authorization server for its own agent endpoint: clients register, ask to
 * sign in, wait for the owner's answer, and get short-lived access tokens bound to one resource and
 * one place plus a rotating refresh token. Plain inputs and outputs: the HTTP adapter maps them.
 *
 * Clients, requests and grants live in one state file, so the CLI (approve, deny, revoke) and the
 * server see each other's changes at once. Authorization codes live only in this process's memory:
 * they are minted when the browser learns of the approval and must come back within a minute.
 */
export class AuthorizationServer {
  private readonly file: VersionedJsonFile<OAuthState>;
  private readonly now: () => number;
  private readonly codes = new Map<string, IssuedCode>();
  private readonly touched = new Map<string, number>();

  constructor(private readonly options: AuthorizationServerOptions) {
    this.file = oauthStateFile(options.stateDir);
    this.now = options.now ?? Date.now;
  }

  async getClient(clientId: string): Promise<RegisteredClient | undefined> {
    if (this.options.documents && ClientMetadataDocuments.names(clientId)) return this.options.documents.get(clientId);
    return (await this.file.read()).clients.find((c) => c.client_id === clientId);
  }

  /** Registers a public client (RFC 7591); a secret asked for is not given: PKCE proves the client. */
  async registerClient(metadata: {
    client_name?: string | undefined;
    client_uri?: string | undefined;
    redirect_uris: string[];
  }): Promise<RegisteredClient> {
    if (metadata.redirect_uris.length === 0 || metadata.redirect_uris.length > 10) {
      throw new OAuthServerError('invalid_client_metadata', 'Register 1 to 10 redirect URIs.');
    }
    for (const uri of metadata.redirect_uris) checkRedirectUri(uri);
    const name = metadata.client_name === undefined ? undefined : cleanName(metadata.client_name);
    const nowMs = this.now();
    const client: RegisteredClient = {
      client_id: randomBytes(16).toString('hex'),
      ...(name && { client_name: name }),
      ...(metadata.client_uri && { client_uri: metadata.client_uri.slice(0, 500) }),
      redirect_uris: [...metadata.redirect_uris],
      client_id_issued_at: Math.floor(nowMs / 1000),
      registeredAt: new Date(nowMs).toISOString(),
    };
    await this.file.update((current) => {
      let clients = current.clients;
      if (clients.length >= MAX_CLIENTS) {
        const inUse = new Set([...current.grants.map((g) => g.clientId), ...current.requests.map((r) => r.clientId)]);
        const spare = clients.find((c) => !inUse.has(c.client_id));
        if (!spare)
          throw new OAuthServerError(
            'invalid_client_metadata',
            `This machine already has ${MAX_CLIENTS} registered clients. Ask its owner to revoke some.`,
          );
        clients = clients.filter((c) => c !== spare);
      }
      return { ...current, clients: [...clients, client] };
    });
    return client;
  }

  /**
   * Records a sign-in for the owner to answer and returns the key the browser waits with (only its
   * hash is stored). `endpoint` is this server's MCP URL as the client reached it: the resource a
   * client names must be it, optionally with `?workspace_path=` for the place it asks for.
   */
  async startSignIn(
    client: RegisteredClient,
    request: AuthorizeRequest,
    endpoint: string,
  ): Promise<{ key: string; request: SignInRequest }> {
    const { resource, askedPlace } = this.checkResource(request.resource, endpoint);
    const key = randomBytes(32).toString('base64url');
    const nowMs = this.now();
    const entry: SignInRequest = {
      id: randomBytes(8).toString('hex'),
      keyHash: sha256(key),
      code: userCode(),
      clientId: client.client_id,
      clientName: client.client_name ?? 'An unnamed client',
      redirectUri: request.redirectUri,
      ...(askedPlace !== undefined && { askedPlace }),
      resource,
      codeChallenge: request.codeChallenge,
      ...(request.state !== undefined && { state: request.state }),
      scopes: request.scopes,
      ...(request.from && { from: request.from.slice(0, 100) }),
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + APPROVAL_TTL_MS).toISOString(),
    };
    await this.file.update((current) => ({ ...current, requests: [...this.keptRequests(current.requests), entry] }));
    return { key, request: entry };
  }

  /** Requests waiting for the owner, oldest first. */
  async pending(): Promise<SignInRequest[]> {
    const nowMs = this.now();
    return (await this.file.read()).requests.filter((r) => !r.decision && Date.parse(r.expiresAt) > nowMs);
  }

  /** The owner's answer to the request shown with `code`; `place` (a place root) is required to approve. */
  async decide(code: string, outcome: 'approved' | 'denied', by: string, place?: string): Promise<SignInRequest> {
    const wanted = normalizeCode(code);
    if (outcome === 'approved' && place === undefined) throw new Error('An approval needs the place.');
    let decided: SignInRequest | undefined;
    await this.file.update((current) => {
      const request = current.requests.find((r) => r.code === wanted);
      if (!request) {
        throw new SignInRequestError(
          `No sign-in request has the code ${wanted || code.slice(0, 20)}. List the waiting ones with "persona-mcp-workspace approve".`,
          404,
        );
      }
      if (request.decision) throw new SignInRequestError(`The sign-in ${request.code} was already ${request.decision.outcome}.`, 409);
      if (Date.parse(request.expiresAt) <= this.now()) {
        throw new SignInRequestError(
          `The sign-in ${request.code} expired: it was not answered within ${APPROVAL_TTL_MS / 60_000} minutes, so it was refused. Ask the client to sign in again.`,
          409,
        );
      }
      decided = {
        ...request,
        decision: { outcome, ...(outcome === 'approved' && { place: place! }), at: new Date(this.now()).toISOString(), by },
      };
      return { ...current, requests: current.requests.map((r) => (r === request ? decided! : r)) };
    });
    return decided!;
  }

  /** What the browser waiting with `key` is told; an answer is given once. */
  async wait(key: string): Promise<WaitState> {
    const keyHash = sha256(key);
    const seen = (await this.file.read()).requests.find((r) => r.keyHash === keyHash);
    if (!seen)
      return {
        state: 'gone',
        message: 'This sign-in is not known here: it may be over an hour old, or the link is wrong. Start the sign-in again from your app.',
      };
    if (seen.deliveredAt) return { state: 'gone', message: 'This sign-in was already answered. Go back to your app.' };
    if (!seen.decision && Date.parse(seen.expiresAt) > this.now()) return { state: 'pending', request: seen };
    let answer: WaitState | undefined;
    await this.file.update((current) => {
      const request = current.requests.find((r) => r.keyHash === keyHash);
      if (!request || request.deliveredAt) return current;
      if (!request.decision && Date.parse(request.expiresAt) > this.now()) return current;
      answer = this.answer(request);
      const delivered = { ...request, deliveredAt: new Date(this.now()).toISOString() };
      return { ...current, requests: current.requests.map((r) => (r === request ? delivered : r)) };
    });
    return answer ?? this.wait(key);
  }

  /** The challenge of a code that `clientId` may exchange; any other code is `invalid_grant`. */
  async challengeFor(clientId: string, code: string): Promise<string> {
    return (await this.usableCode(clientId, code)).codeChallenge;
  }

  /** Trades a code (PKCE already checked by the caller) for tokens; the grant is recorded then. */
  async exchangeCode(clientId: string, code: string, redirectUri: string | undefined, resource: string | undefined): Promise<TokenSet> {
    const issued = await this.usableCode(clientId, code);
    if (redirectUri !== undefined && redirectUri !== issued.redirectUri) {
      throw new OAuthServerError('invalid_grant', 'redirect_uri is not the one the sign-in was started with.');
    }
    if (resource !== undefined && canonicalResource(resource) !== issued.resource) {
      throw new OAuthServerError('invalid_target', 'resource is not the one the sign-in was started with.');
    }
    issued.used = true;
    const refresh = newRefreshSecret();
    const nowMs = this.now();
    const grant: Grant = {
      id: randomBytes(8).toString('hex'),
      clientId,
      clientName: issued.clientName,
      place: issued.place,
      resource: issued.resource,
      redirectUri: issued.redirectUri,
      approvedAt: new Date(nowMs).toISOString(),
      lastUsedAt: new Date(nowMs).toISOString(),
      refreshHash: sha256(refresh),
      refreshExpiresAt: new Date(nowMs + REFRESH_TTL_MS).toISOString(),
      rotatedHashes: [],
    };
    issued.grantId = grant.id;
    await this.file.update((current) => ({ ...current, grants: [...current.grants, grant] }));
    return this.tokens(grant, refresh);
  }

  /** A new access token and a new refresh token; the old refresh token is spent. */
  async refresh(clientId: string, refreshToken: string, resource: string | undefined): Promise<TokenSet> {
    const [grantId, secret] = splitRefresh(refreshToken);
    const presented = sha256(secret);
    const refresh = newRefreshSecret();
    let result: Grant | OAuthServerError | undefined;
    await this.file.update((current) => {
      const grant = current.grants.find((g) => g.id === grantId && g.clientId === clientId);
      if (!grant) {
        result = new OAuthServerError('invalid_grant', 'This refresh token is not known here. Sign in again.');
        return current;
      }
      if (grant.revokedAt) {
        result = new OAuthServerError('invalid_grant', revokedMessage(grant.revokedWhy));
        return current;
      }
      if (grant.rotatedHashes.includes(presented)) {
        // Someone holds a refresh token that was already exchanged: one of the two copies leaked.
        result = new OAuthServerError(
          'invalid_grant',
          "This refresh token was already used, so it may have been stolen: the client's access is revoked. Sign in again.",
        );
        return replaceGrant(current, {
          ...grant,
          revokedAt: new Date(this.now()).toISOString(),
          revokedWhy: 'a refresh token was used twice, so it may have been stolen',
        });
      }
      if (!safeEqualHex(grant.refreshHash, presented)) {
        result = new OAuthServerError('invalid_grant', 'This refresh token is not valid. Sign in again.');
        return current;
      }
      if (Date.parse(grant.refreshExpiresAt) <= this.now()) {
        result = new OAuthServerError('invalid_grant', 'This refresh token expired. Sign in again.');
        return current;
      }
      if (resource !== undefined && canonicalResource(resource) !== grant.resource) {
        result = new OAuthServerError('invalid_target', 'resource is not the one this client signed in for.');
        return current;
      }
      const nowIso = new Date(this.now()).toISOString();
      const next: Grant = {
        ...grant,
        lastUsedAt: nowIso,
        refreshHash: sha256(refresh),
        refreshExpiresAt: new Date(this.now() + REFRESH_TTL_MS).toISOString(),
        rotatedHashes: [...grant.rotatedHashes, grant.refreshHash].slice(-MAX_ROTATED),
      };
      result = next;
      return replaceGrant(current, next);
    });
    if (result instanceof OAuthServerError) throw result;
    return this.tokens(result!, refresh);
  }

  /** RFC 7009: revoking a refresh token ends the client's grant; an unknown token is no error. */
  async revokeToken(clientId: string, token: string): Promise<void> {
    const dot = token.indexOf('.');
    const grantId = token.slice(0, dot);
    if (dot !== 16 || !/^[0-9a-f]{16}$/.test(grantId)) return;
    const presented = sha256(token.slice(dot + 1));
    const grant = (await this.file.read()).grants.find((g) => g.id === grantId && g.clientId === clientId);
    if (grant && safeEqualHex(grant.refreshHash, presented)) await this.revokeGrant(grantId, 'signed out by the client');
  }

  /** The signed-in clients, newest first, revoked ones included. */
  async signedIn(): Promise<SignedInClient[]> {
    return (await this.file.read()).grants
      .map((g) => ({
        id: g.id,
        clientId: g.clientId,
        name: g.clientName,
        place: g.place,
        ...(g.redirectUri && { redirectUri: g.redirectUri }),
        approvedAt: g.approvedAt,
        ...(g.lastUsedAt && { lastUsedAt: g.lastUsedAt }),
        ...(g.revokedAt && { revokedAt: g.revokedAt }),
        ...(g.revokedWhy && { revokedWhy: g.revokedWhy }),
      }))
      .reverse();
  }

  /** Ends a client's access: its access and refresh tokens are refused from the next request on. */
  async revokeGrant(id: string, why = "by the machine's owner"): Promise<SignedInClient> {
    await this.file.update((current) => {
      const grant = current.grants.find((g) => g.id === id);
      if (!grant)
        throw new UnknownClientError(
          `No signed-in client has the id ${/^[0-9a-f]{16}$/.test(id) ? id : 'given'}. List them with "persona-mcp-workspace clients list".`,
        );
      if (grant.revokedAt) return current;
      return replaceGrant(current, { ...grant, revokedAt: new Date(this.now()).toISOString(), revokedWhy: why });
    });
    return (await this.signedIn()).find((c) => c.id === id)!;
  }

  /** For the verifier, on every request: one `stat` unless the file changed. */
  async grantStatus(id: string): Promise<GrantStatus> {
    const grant = (await this.file.read()).grants.find((g) => g.id === id);
    if (!grant) return { status: 'unknown' };
    if (!grant.revokedAt) return { status: 'active', name: grant.clientName };
    return { status: 'revoked', name: grant.clientName, ...(grant.revokedWhy && { revokedWhy: grant.revokedWhy }) };
  }

  /** Notes that a client used its access now; written at most once a minute per client. */
  async touch(id: string): Promise<void> {
    const nowMs = this.now();
    if (nowMs - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(id, nowMs);
    await this.file.update((current) => {
      const grant = current.grants.find((g) => g.id === id);
      return grant ? replaceGrant(current, { ...grant, lastUsedAt: new Date(nowMs).toISOString() }) : current;
    });
  }

  private answer(request: SignInRequest): WaitState {
    const url = new URL(request.redirectUri);
    if (request.state !== undefined) url.searchParams.set('state', request.state);
    if (!request.decision || request.decision.outcome === 'denied') {
      const expired = !request.decision;
      url.searchParams.set('error', 'access_denied');
      url.searchParams.set(
        'error_description',
        expired
          ? `The machine's owner did not answer within ${APPROVAL_TTL_MS / 60_000} minutes.`
          : "The machine's owner refused this sign-in.",
      );
      return { state: 'answered', outcome: expired ? 'expired' : 'denied', redirect: url.href };
    }
    const code = randomBytes(32).toString('base64url');
    this.sweepCodes();
    this.codes.set(sha256(code), {
      clientId: request.clientId,
      requestId: request.id,
      codeChallenge: request.codeChallenge,
      redirectUri: request.redirectUri,
      resource: request.resource,
      place: request.decision.place ?? '',
      clientName: request.clientName,
      expiresAt: this.now() + CODE_TTL_MS,
      used: false,
    });
    url.searchParams.set('code', code);
    return { state: 'answered', outcome: 'approved', redirect: url.href };
  }

  private async usableCode(clientId: string, code: string): Promise<IssuedCode> {
    const issued = this.codes.get(sha256(code));
    if (!issued || issued.clientId !== clientId)
      throw new OAuthServerError('invalid_grant', 'This authorization code is not valid for this client.');
    if (issued.used) {
      // A code presented twice was intercepted: end whatever the first exchange got.
      if (issued.grantId) await this.revokeGrant(issued.grantId, 'its authorization code was used twice, so it may have been stolen');
      throw new OAuthServerError('invalid_grant', 'This authorization code was already used. Sign in again.');
    }
    if (issued.expiresAt <= this.now()) throw new OAuthServerError('invalid_grant', 'This authorization code expired. Sign in again.');
    return issued;
  }

  private sweepCodes(): void {
    const nowMs = this.now();
    for (const [hash, code] of this.codes) if (code.expiresAt + CODE_TTL_MS <= nowMs) this.codes.delete(hash);
  }

  private async tokens(grant: Grant, refreshSecret: string): Promise<TokenSet> {
    const { key, keyId } = await this.options.signingKey();
    // Only issuing tokens signs: the owner's answers and revocations (the approve and clients commands) never load the JWT library.
    const { SignJWT } = await import('jose');
    const nowSeconds = Math.floor(this.now() / 1000);
    const access = await new SignJWT({ client_id: grant.clientId, workspace_path: grant.place === '' ? '.' : grant.place })
      .setProtectedHeader({ alg: 'HS256', kid: keyId, typ: 'at+jwt' })
      .setIssuer(APP_TOKEN_ISSUER)
      .setSubject(`${GRANT_SUBJECT_PREFIX}${grant.id}`)
      .setAudience(grant.resource)
      .setJti(randomBytes(8).toString('hex'))
      .setIssuedAt(nowSeconds)
      .setExpirationTime(nowSeconds + ACCESS_TOKEN_TTL_SECONDS)
      .sign(key);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: `${grant.id}.${refreshSecret}`,
    };
  }

  /** The resource as the audience (origin and path), and the place it names, if any. */
  private checkResource(resource: string | undefined, endpoint: string): { resource: string; askedPlace?: string } {
    const expected = canonicalResource(endpoint);
    if (resource === undefined) return { resource: expected };
    let url: URL;
    try {
      url = new URL(resource);
    } catch {
      throw new OAuthServerError('invalid_target', 'resource is not a URL.');
    }
    if (canonicalResource(resource) !== expected || url.hash) {
      throw new OAuthServerError('invalid_target', `This server issues tokens only for ${expected}, not for ${url.origin}${url.pathname}.`);
    }
    const places = url.searchParams.getAll('workspace_path');
    if (places.length > 1 || [...url.searchParams.keys()].some((k) => k !== 'workspace_path')) {
      throw new OAuthServerError('invalid_target', 'resource may carry one workspace_path and nothing else in its query.');
    }
    return { resource: expected, ...(places[0] && { askedPlace: places[0] }) };
  }

  /** Requests still worth keeping: not too old. */
  private keptRequests(requests: readonly SignInRequest[]): SignInRequest[] {
    const cutoff = this.now() - REQUEST_KEEP_MS;
    return requests.filter((r) => Date.parse(r.expiresAt) > cutoff);
  }
}

/** Whether a signed-in client's access holds, and why not when it was ended. */
export interface GrantStatus {
  status: 'active' | 'revoked' | 'unknown';
  name?: string;
  /** What ended it: the owner, the client signing out, a reused refresh token or code. */
  revokedWhy?: string;
}

/** What a client whose access was ended is told, with the recorded reason. */
export function revokedMessage(why: string | undefined): string {
  return `This client's access was revoked${why ? ` (${why})` : ''}. Sign in again.`;
}

/** A resource URL as an audience: origin and path, no query (the place rides in its own claim). */
export function canonicalResource(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname.replace(/\/+$/, '') || '/';
  return `${url.origin}${path}`;
}

function replaceGrant(state: OAuthState, grant: Grant): OAuthState {
  return { ...state, grants: state.grants.map((g) => (g.id === grant.id ? grant : g)) };
}

function splitRefresh(token: string): [string, string] {
  const dot = token.indexOf('.');
  const id = token.slice(0, dot);
  if (dot !== 16 || !/^[0-9a-f]{16}$/.test(id))
    throw new OAuthServerError('invalid_grant', 'This refresh token is not valid. Sign in again.');
  return [id, token.slice(dot + 1)];
}

function newRefreshSecret(): string {
  return randomBytes(32).toString('base64url');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function safeEqualHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** `ABCD-EFGH`: eight characters no one mistakes for another (no 0/O, 1/I/L). */
function userCode(): string {
  const pick = () => Array.from({ length: 4 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
  return `${pick()}-${pick()}`;
}

/** What a person typed as a code, as stored: upper case, one dash. */
export function normalizeCode(text: string): string {
  const plain = text.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return plain.length === 8 ? `${plain.slice(0, 4)}-${plain.slice(4)}` : '';
}

/** A client's own name, shown to the owner: printable, at most 80 characters. */
function cleanName(name: string): string {
  return [...name.replace(/\p{C}/gu, '').trim()].slice(0, 80).join('');
}
