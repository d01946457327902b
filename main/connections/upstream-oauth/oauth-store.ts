import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import * as z from 'zod';
import type { ConnectionIdentity, ConnectionSecrets } from '../../secrets/connection-secrets.js';
import type { StepUpRecord } from './step-ups.js';

/**
 * How the app is known to the provider: the person's own OAuth app, a client ID metadata document,
 * a dynamic registration, or the machine credentials the owner set (client-credentials.ts).
 */
export type ClientSource = 'own-app' | 'metadata-document' | 'registered' | 'client-credentials';

export interface StoredClient {
  source: ClientSource;
  /** As the SDK saved it, stamped with `issuer` (the authorization server it is valid at). */
  information: OAuthClientInformationMixed;
}

/**
 * Authorization-server metadata as the SDK parsed it, with the RFC 8414 fields it keeps when the
 * server has RFC 8414 metadata (its OpenID discovery parse drops them).
 */
export type ServerMetadata = AuthorizationServerMetadata &
  Partial<Pick<OAuthMetadata, 'revocation_endpoint' | 'revocation_endpoint_auth_methods_supported'>> & {
    /** RFC 9207: the server names itself (`iss`) in its answers to the redirect URI. */
    authorization_response_iss_parameter_supported?: boolean;
  };

/** The authorization server a login was obtained from, kept so refreshes and revocations go back to it. */
export interface StoredServer {
  authorizationServerUrl: string;
  metadata: ServerMetadata;
  /** The RFC 8707 resource the login was granted for, sent again with every refresh. */
  resource?: string;
}

export type StoredTokens = OAuthTokens & {
  /** The authorization server that issued them. */
  issuer: string;
  /** When the access token stops working (ms since the epoch), from `expires_in`. */
  expires_at?: number;
};

/**
 * How the provider ended a login: its grant refused at refresh (revoked or expired there), this
 * app's registration, the owner's own OAuth app or their machine credentials refused, or an
 * expired login it gave no way to renew.
 */
export type LoginEnd = 'grant' | 'client' | 'own-app' | 'client-credentials' | 'no-refresh-token';

/** Everything OAuth of one connection. */
export interface OAuthRecord {
  client?: StoredClient | undefined;
  server?: StoredServer | undefined;
  tokens?: StoredTokens | undefined;
  /**
   * The scope of the login the provider ended (a refused refresh or registration), kept while no
   * login replaces it so the next sign-in asks for it again (with a step-up's, it may be wider than
   * a first sign-in's). Forgetting the connection (revokeAndForget) forgets it too.
   */
  grantedScope?: string | undefined;
  /** Why the provider ended the last login (LoginEnd), kept while no login replaces it, so the connection says so. */
  ended?: LoginEnd | undefined;
  /** The sign-in in progress: its state and PKCE verifier, until the answer comes back. */
  signIn?: { state: string; verifier: string } | undefined;
  /** Wider access the server asked for (403 insufficient_scope), and how many step-ups ran. */
  stepUp?: StepUpRecord | undefined;
}

// One keychain item per connection, so that a change touching several parts (a rotated refresh
// token with its access token; the tokens with the verifier they replace) is one atomic write.
const ITEM = 'oauth';

const recordSchema = z.object({
  client: z
    .object({
      source: z.enum(['own-app', 'metadata-document', 'registered', 'client-credentials']),
      information: z.looseObject({ client_id: z.string() }),
    })
    .optional(),
  server: z
    .object({
      authorizationServerUrl: z.string(),
      metadata: z.looseObject({ issuer: z.string(), authorization_endpoint: z.string(), token_endpoint: z.string() }),
      resource: z.string().optional(),
    })
    .optional(),
  tokens: z
    .looseObject({
      access_token: z.string(),
      token_type: z.string(),
      issuer: z.string(),
      refresh_token: z.string().optional(),
      expires_at: z.number().optional(),
    })
    .optional(),
  grantedScope: z.string().optional(),
  ended: z.enum(['grant', 'client', 'own-app', 'client-credentials', 'no-refresh-token']).optional(),
  signIn: z.object({ state: z.string(), verifier: z.string() }).optional(),
  stepUp: z
    .object({
      need: z
        .discriminatedUnion('kind', [
          z.object({ kind: z.literal('step-up'), scope: z.string(), added: z.array(z.string()) }),
          z.object({ kind: z.literal('exhausted'), scope: z.string(), signIns: z.number() }),
        ])
        .optional(),
      stepUps: z.number(),
      repeats: z.number(),
      counted: z.string().optional(),
    })
    .optional(),
});

/**
 * Each connection's OAuth record in the keychain (via ConnectionSecrets), cached in memory for the
 * hot path. Changes to one connection run one at a time and read the keychain afresh, so a change
 * never overwrites another made meanwhile; a change is in the keychain before its result is returned.
 */
export class OAuthStore {
  private readonly cache = new Map<string, OAuthRecord>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly secrets: ConnectionSecrets) {}

  async read(connection: ConnectionIdentity): Promise<OAuthRecord> {
    const key = keyOf(connection);
    const cached = this.cache.get(key);
    if (cached) return cached;
    // Loaded in the queue: a load begun before a change must not land in the cache after it.
    return this.serial(key, async () => {
      const record = this.cache.get(key) ?? (await this.load(connection));
      this.cache.set(key, record);
      return record;
    });
  }

  /** Runs `change` on the current record; the record it returns is stored before its result is returned. */
  update<T>(connection: ConnectionIdentity, change: (current: OAuthRecord) => Promise<[OAuthRecord, T]> | [OAuthRecord, T]): Promise<T> {
    const key = keyOf(connection);
    return this.serial(key, async () => {
      const current = await this.load(connection);
      const [next, result] = await change(current);
      if (next !== current) await this.secrets.set(connection, ITEM, JSON.stringify(next));
      this.cache.set(key, next);
      return result;
    });
  }

  /**
   * Runs `last` on the current record, then deletes every keychain item of the connection, after
   * any change in progress and before any change asked for meanwhile (so no refresh lands between).
   */
  forget<T>(connection: ConnectionIdentity, last: (current: OAuthRecord) => Promise<T>): Promise<T> {
    const key = keyOf(connection);
    return this.serial(key, async () => {
      const result = await last(await this.load(connection));
      await this.secrets.deleteAll(connection);
      this.cache.delete(key);
      return result;
    });
  }

  private async load(connection: ConnectionIdentity): Promise<OAuthRecord> {
    const text = await this.secrets.get(connection, ITEM);
    if (text === undefined) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const result = recordSchema.safeParse(parsed);
    // An unreadable record (another version's) holds no usable login: the connection shows
    // "sign in", and that sign-in replaces it.
    return result.success ? (result.data as OAuthRecord) : {};
  }

  private serial<T>(key: string, task: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(key) ?? Promise.resolve()).then(task);
    const tail = run.catch(() => {});
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return run;
  }
}

/** The scope the connection's last login was granted: the current login's, else the one of the login the provider ended. */
export function lastGrantedScope(record: OAuthRecord): string | undefined {
  return record.tokens ? record.tokens.scope : record.grantedScope;
}

/** Tokens as stored: stamped with their issuer and the time the access token stops working. */
export function storedTokens(tokens: OAuthTokens, issuer: string, now: number): StoredTokens {
  return { ...tokens, issuer, ...(tokens.expires_in !== undefined && { expires_at: now + tokens.expires_in * 1000 }) };
}

export function keyOf(connection: ConnectionIdentity): string {
  return `${connection.storeId}/${connection.serverName}`;
}
