import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
  type ProtectedHeaderParameters,
} from 'jose';
import { LOCAL_PERSON } from '../places/user-id.js';
import { APP_TOKEN_ISSUER } from './agent-tokens.js';
import { GRANT_SUBJECT_PREFIX, revokedMessage, type GrantStatus } from './agent-oauth/authorization-server.js';

/** Who is calling, as the verified token says. */
export interface Caller {
  subject: string;
  projectId?: string;
  workspacePath?: string;
  /** The app token's id (`jti`), for app tokens only. */
  tokenId?: string;
  /** 'local' is whoever runs the app (the CLI, the desktop window, or anyone when auth is off). */
  source: 'app' | 'external' | 'local';
  /** A client that signed in with OAuth and was approved by the owner (an app token, `sub: grant:<id>`). */
  client?: { grantId: string; clientId: string; name: string };
  /** The resource an OAuth access token was issued for (its `aud`). */
  audience?: string;
}

export type AuthErrorReason =
  | 'missing'
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'bad_signature'
  | 'bad_algorithm'
  | 'bad_claims'
  | 'revoked'
  | 'unknown_token'
  /** An OAuth access token issued for another resource. */
  | 'wrong_audience'
  | 'no_key'
  /** The JWKS could not be fetched: the caller is not at fault, an adapter may prefer 503. */
  | 'key_unavailable';

/** A request's token is refused. The message is safe to send to the client: it never contains the token. */
export class AuthError extends Error {
  override readonly name = 'AuthError';
  constructor(
    readonly reason: AuthErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The verifier's settings are unusable; raised when it is created, never per request. */
export class JwtConfigError extends Error {
  override readonly name = 'JwtConfigError';
}

/** The app's own token authority (the `AgentTokenStore`). */
export interface AppTokenAuthority {
  signingKey(): Promise<{ key: Uint8Array; keyId: string }>;
  /** Checked on every verification, so revocation by another process applies at once. */
  status(id: string): Promise<'active' | 'revoked' | 'unknown'>;
}

/** The clients signed in with OAuth (the `AuthorizationServer`): their access tokens are app tokens too. */
export interface GrantAuthority {
  /** Checked on every verification, so revocation by another process applies at once. */
  grantStatus(id: string): Promise<GrantStatus>;
}

export interface JwtVerifierOptions {
  /** HS256 shared secret. */
  secret?: string | undefined;
  /** SPKI PEM; the accepted algorithms follow from the key type. */
  publicKeyPem?: string | undefined;
  /** https, or http to a loopback host. */
  jwksUrl?: string | undefined;
  /** Required `iss` of external tokens. */
  issuer?: string | undefined;
  /** Required `aud` of external tokens. */
  audience?: string | string[] | undefined;
  /** The app's own tokens: verified only with the app key, whatever else is configured. */
  appTokens?: AppTokenAuthority | undefined;
  /** OAuth access tokens this app issued (signed with the same key, `sub: grant:<id>`). */
  grants?: GrantAuthority | undefined;
  /** The time (ms since the epoch) tokens' `exp` and `nbf` are checked against. */
  now?: (() => number) | undefined;
}

export const AUTH_REALM = 'persona-mcp-workspace';
/** Allowed clock difference between the token issuer and this machine for `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 5;
/** Longer "tokens" are refused before any parsing. */
const MAX_TOKEN_LENGTH = 16 * 1024;

const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const ASYMMETRIC_ALGORITHMS = [...RSA_ALGORITHMS, 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const EC_ALGORITHMS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };
const NAMED_CLAIMS: Record<string, string> = {
  iss: 'issuer (iss)',
  aud: 'audience (aud)',
  sub: 'subject (sub)',
  exp: 'expiry (exp)',
  iat: 'issue time (iat)',
  jti: 'id (jti)',
};

/** One way to check an external token's signature. */
interface ExternalKey {
  algorithms: string[];
  verify(token: string, options: JWTVerifyOptions): Promise<JWTPayload>;
}

/** How many verified tokens are remembered, so a token's signature is checked once, not per request. */
const VERIFIED_CACHE_SIZE = 1024;

interface Verified {
  caller: Caller;
  exp?: number;
  nbf?: number;
}

export class JwtVerifier {
  // Tokens are immutable strings: once one verified, only its time window and (for app tokens)
  // revocation can change, and both are checked again on every use.
  private readonly verified = new Map<string, Verified>();

  private constructor(
    private readonly external: ExternalKey[],
    private readonly externalOptions: JWTVerifyOptions,
    private readonly app: { authority: AppTokenAuthority; key: Uint8Array; keyId: string } | undefined,
    private readonly grants: GrantAuthority | undefined,
    private readonly now: () => number,
  ) {}

  /** Loads the keys now, so a bad setting stops startup instead of failing every request. */
  static async create(options: JwtVerifierOptions): Promise<JwtVerifier> {
    const external: ExternalKey[] = [];
    if (options.secret !== undefined) {
      if (options.secret.length === 0) throw new JwtConfigError('The JWT secret is empty.');
      const secret = new TextEncoder().encode(options.secret);
      external.push({ algorithms: ['HS256'], verify: async (t, o) => (await jwtVerify(t, secret, o)).payload });
    }
    if (options.publicKeyPem !== undefined) {
      const { key, algorithms } = publicKeyFromPem(options.publicKeyPem);
      external.push({ algorithms, verify: async (t, o) => (await jwtVerify(t, key, o)).payload });
    }
    if (options.jwksUrl !== undefined) external.push(remoteKeySet(options.jwksUrl));

    const app = options.appTokens && { authority: options.appTokens, ...(await options.appTokens.signingKey()) };
    return new JwtVerifier(
      external,
      {
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // Without exp an external token could never be cut off: the app cannot revoke it.
        requiredClaims: ['sub', 'exp'],
        ...(options.issuer !== undefined && { issuer: options.issuer }),
        ...(options.audience !== undefined && { audience: options.audience }),
      },
      app,
      options.grants,
      options.now ?? Date.now,
    );
  }

  /**
   * Verifies an `Authorization` header value (`Bearer <token>`). `audience` is the resource being
   * called: OAuth access tokens are accepted only there, and only if issued for it.
   */
  async verifyAuthorization(header: string | undefined, audience?: string): Promise<Caller> {
    // Per RFC 6750, a request with no credentials, or another scheme, is "missing", not invalid.
    const [scheme, ...rest] = (header ?? '').trim().split(/ +/);
    if (!scheme || scheme.toLowerCase() !== 'bearer') {
      throw new AuthError('missing', 'This server needs a bearer token: send "Authorization: Bearer <token>".');
    }
    if (rest.length !== 1) {
      throw new AuthError('malformed', 'The Authorization header must be "Bearer" followed by one token.');
    }
    return this.verifyToken(rest[0]!, audience);
  }

  async verifyToken(token: string, audience?: string): Promise<Caller> {
    if (token.length === 0) throw new AuthError('missing', 'This server needs a bearer token.');
    // A token in the cache passed every check below once; its header can't have changed since.
    const cached = this.verified.get(token);
    if (cached && stillInWindow(cached, this.now() / 1000)) {
      if (cached.caller.tokenId !== undefined) await this.checkAppToken(cached.caller.tokenId);
      if (cached.caller.client) await this.checkGrant(cached.caller, audience);
      return cached.caller;
    }
    this.verified.delete(token);
    const header = protectedHeader(token);
    if (typeof header.alg !== 'string' || header.alg.toLowerCase() === 'none') {
      throw new AuthError('bad_algorithm', 'Unsigned tokens (alg "none") are never accepted.');
    }
    const { caller, payload } =
      this.app && header.kid === this.app.keyId
        ? await this.verifyAppToken(token, audience)
        : await this.verifyExternalToken(token, header.alg);
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, {
      caller,
      ...(payload.exp !== undefined && { exp: payload.exp }),
      ...(payload.nbf !== undefined && { nbf: payload.nbf }),
    });
    return caller;
  }

  private async checkAppToken(id: string): Promise<void> {
    const status = await this.app!.authority.status(id);
    if (status === 'revoked') throw new AuthError('revoked', "This token has been revoked. Ask the machine's owner for a new one.");
    if (status === 'unknown') {
      throw new AuthError(
        'unknown_token',
        "This token is not known on this machine (its record was removed). Ask the machine's owner for a new one.",
      );
    }
  }

  /** An OAuth access token: for `audience` only (never where none is given), and its grant still active. */
  private async checkGrant(caller: Caller, audience: string | undefined): Promise<void> {
    if (audience === undefined || caller.audience !== audience) {
      throw new AuthError('wrong_audience', "This access token was issued for another resource. Sign in to this server's own URL.");
    }
    const { status, revokedWhy } = await this.grants!.grantStatus(caller.client!.grantId);
    if (status === 'revoked') throw new AuthError('revoked', revokedMessage(revokedWhy));
    if (status === 'unknown') throw new AuthError('unknown_token', 'This client is not signed in on this machine. Sign in again.');
  }

  private async verifyAppToken(token: string, audience: string | undefined): Promise<{ caller: Caller; payload: JWTPayload }> {
    const { key } = this.app!;
    const payload = await mapJoseErrors(
      jwtVerify(token, key, {
        algorithms: ['HS256'],
        issuer: APP_TOKEN_ISSUER,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.now()),
        requiredClaims: ['sub', 'jti'],
      }).then((result) => result.payload),
    );
    if (typeof payload.sub === 'string' && payload.sub.startsWith(GRANT_SUBJECT_PREFIX)) return this.verifyGrantToken(payload, audience);
    const id = payload.jti;
    if (typeof id !== 'string' || payload.sub !== `token:${id}`) {
      throw new AuthError('bad_claims', "The token's subject does not match its id.");
    }
    await this.checkAppToken(id);
    return { caller: { ...callerClaims(payload), tokenId: id, source: 'app' }, payload };
  }

  private async verifyGrantToken(payload: JWTPayload, audience: string | undefined): Promise<{ caller: Caller; payload: JWTPayload }> {
    const grantId = payload.sub!.slice(GRANT_SUBJECT_PREFIX.length);
    if (!this.grants || typeof payload.aud !== 'string' || typeof payload.exp !== 'number' || typeof payload.client_id !== 'string') {
      throw new AuthError('bad_claims', 'This access token is not one this server accepts.');
    }
    const { name } = await this.grants.grantStatus(grantId);
    const caller: Caller = {
      ...callerClaims(payload),
      source: 'app',
      audience: payload.aud,
      client: { grantId, clientId: payload.client_id, name: name ?? payload.client_id },
    };
    await this.checkGrant(caller, audience);
    return { caller, payload };
  }

  private async verifyExternalToken(token: string, alg: string): Promise<{ caller: Caller; payload: JWTPayload }> {
    if (this.external.length === 0) {
      throw new AuthError('no_key', 'This server accepts only tokens it created itself; this token is not one of them.');
    }
    const candidates = this.external.filter((key) => key.algorithms.includes(alg));
    if (candidates.length === 0) {
      throw new AuthError('bad_algorithm', 'The token is signed with an algorithm this server does not accept.');
    }
    // Several sources may accept the algorithm; only a signature mismatch moves on to the next one.
    for (const candidate of candidates) {
      try {
        const payload = await mapJoseErrors(
          candidate.verify(token, { ...this.externalOptions, algorithms: candidate.algorithms, currentDate: new Date(this.now()) }),
        );
        const caller = callerClaims(payload);
        // `local` is whoever runs the app; no issuer can hand that name to a token.
        if (caller.subject === LOCAL_PERSON) {
          throw new AuthError(
            'bad_claims',
            `The token's subject (sub) is "${LOCAL_PERSON}", a name reserved for the person who runs this app.`,
          );
        }
        return { caller: { ...caller, source: 'external' }, payload };
      } catch (error) {
        if (!(error instanceof AuthError && error.reason === 'bad_signature')) throw error;
      }
    }
    throw new AuthError('bad_signature', "The token's signature does not match any key this server trusts.");
  }
}

/** Whether a remembered token is still inside its exp/nbf window (with the same tolerance as jose). */
function stillInWindow({ exp, nbf }: Verified, now: number): boolean {
  return (exp === undefined || now <= exp + CLOCK_TOLERANCE_SECONDS) && (nbf === undefined || now + CLOCK_TOLERANCE_SECONDS >= nbf);
}

/**
 * The `WWW-Authenticate` value for a 401 (RFC 6750 §3); no error code when credentials were missing.
 * `resourceMetadata` points clients that can sign in at the protected resource metadata (RFC 9728 §5.1).
 */
export function wwwAuthenticate(error?: AuthError, resourceMetadata?: string): string {
  const realm = `Bearer realm="${AUTH_REALM}"${resourceMetadata === undefined ? '' : `, resource_metadata="${resourceMetadata.replace(/["\\]/g, encodeURIComponent)}"`}`;
  if (!error || error.reason === 'missing') return realm;
  // error_description allows printable ASCII except '"' and '\'.
  const description = error.message.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
  return `${realm}, error="invalid_token", error_description="${description}"`;
}

function protectedHeader(token: string): ProtectedHeaderParameters {
  if (token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 3) {
    throw new AuthError('malformed', 'The bearer token is not a signed JWT.');
  }
  try {
    return decodeProtectedHeader(token);
  } catch {
    throw new AuthError('malformed', 'The bearer token is not a signed JWT.');
  }
}

function callerClaims(payload: JWTPayload): Pick<Caller, 'subject' | 'projectId' | 'workspacePath'> {
  if (typeof payload.sub !== 'string' || payload.sub.length === 0) {
    throw new AuthError('bad_claims', 'The token has no subject (sub).');
  }
  const projectId = optionalString(payload, 'project_id');
  const workspacePath = optionalString(payload, 'workspace_path');
  return {
    subject: payload.sub,
    ...(projectId !== undefined && { projectId }),
    ...(workspacePath !== undefined && { workspacePath }),
  };
}

function optionalString(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  if (value === undefined) return undefined;
  // Refused rather than ignored: ignoring workspace_path would let the caller pick another place.
  if (typeof value !== 'string' || value.length === 0) {
    throw new AuthError('bad_claims', `The token's ${claim} claim must be a non-empty string.`);
  }
  return value;
}

/** Turns jose's errors about the token into AuthErrors; anything else is a server fault and passes through. */
async function mapJoseErrors<T>(verification: Promise<T>): Promise<T> {
  try {
    return await verification;
  } catch (error) {
    if (error instanceof AuthError || !(error instanceof errors.JOSEError)) throw error;
    throw new AuthError(...describeJoseError(error), { cause: error });
  }
}

function describeJoseError(error: errors.JOSEError): [AuthErrorReason, string] {
  if (error instanceof errors.JWTExpired) return ['expired', 'The token has expired. Get a new one.'];
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') {
      return ['not_yet_valid', 'The token is not valid yet (nbf). Check the clocks of the issuer and of this machine.'];
    }
    const claim = NAMED_CLAIMS[error.claim];
    if (error.claim === 'exp' && error.reason === 'missing') {
      return ['bad_claims', 'The token has no expiry (exp); this server accepts only tokens that expire.'];
    }
    if (error.reason === 'missing') return ['bad_claims', `The token has no ${claim ?? 'required claim'}.`];
    return ['bad_claims', `The token's ${claim ?? 'claims'} ${claim ? 'is' : 'are'} not what this server accepts.`];
  }
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return ['bad_signature', "The token's signature does not match any key this server trusts."];
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return ['bad_algorithm', 'The token is signed with an algorithm this server does not accept.'];
  }
  return ['malformed', 'The bearer token is not a valid signed JWT.'];
}

function publicKeyFromPem(pem: string): { key: KeyObject; algorithms: string[] } {
  if (/PRIVATE KEY/.test(pem)) {
    throw new JwtConfigError('The JWT public key setting holds a private key. Give the public key (-----BEGIN PUBLIC KEY-----) instead.');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (error) {
    throw new JwtConfigError('The JWT public key is not a PEM public key (-----BEGIN PUBLIC KEY-----).', { cause: error });
  }
  const type = key.asymmetricKeyType;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const algorithms =
    type === 'rsa'
      ? RSA_ALGORITHMS
      : type === 'rsa-pss'
        ? RSA_ALGORITHMS.filter((alg) => alg.startsWith('PS'))
        : type === 'ec' && curve && EC_ALGORITHMS[curve]
          ? [EC_ALGORITHMS[curve]]
          : type === 'ed25519'
            ? ['EdDSA', 'Ed25519']
            : undefined;
  if (!algorithms) {
    throw new JwtConfigError(
      `The JWT public key is of an unsupported type (${type}${curve ? ` ${curve}` : ''}). Use RSA, EC P-256/P-384/P-521 or Ed25519.`,
    );
  }
  return { key, algorithms };
}

function remoteKeySet(url: string): ExternalKey {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new JwtConfigError(`The JWKS URL "${url}" is not a URL.`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname) || parsed.hostname.startsWith('127.');
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) {
    throw new JwtConfigError(`The JWKS URL must use https (http is allowed only for loopback): ${url}`);
  }
  const keySet = createRemoteJWKSet(parsed);
  return {
    algorithms: ASYMMETRIC_ALGORITHMS,
    async verify(token, options) {
      try {
        return (await jwtVerify(token, keySet, options)).payload;
      } catch (error) {
        if (error instanceof errors.JWKSMultipleMatchingKeys) return verifyWithAny(token, error, options);
        if (isTokenFault(error)) throw error;
        throw new AuthError('key_unavailable', 'This server could not get the keys to check the token. Try again later.', {
          cause: error,
        });
      }
    },
  };
}

/** Several JWKS keys fit the header (no `kid`, same algorithm): the token is good if one of them signed it. */
async function verifyWithAny(token: string, candidates: errors.JWKSMultipleMatchingKeys, options: JWTVerifyOptions): Promise<JWTPayload> {
  for await (const key of candidates) {
    try {
      return (await jwtVerify(token, key, options)).payload;
    } catch (error) {
      if (!(error instanceof errors.JWSSignatureVerificationFailed)) throw error;
    }
  }
  throw new errors.JWSSignatureVerificationFailed();
}

/** Errors about the token itself, as opposed to fetching or reading the key set. */
function isTokenFault(error: unknown): boolean {
  return (
    error instanceof errors.JOSEError &&
    !(error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error instanceof errors.JWKInvalid) &&
    error.code !== 'ERR_JOSE_GENERIC'
  );
}
