import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ToolSearchMode } from '../../common/tool-search-mode.js';
import { hasUnprintable } from '../places/user-id.js';
import { FileSigningKeySource, keyIdOf, type SigningKeySource } from './signing-key.js';
import { TokenFile, type TokenRecord } from './token-file.js';

/** `iss` of every token this app mints; the verifier requires it of tokens signed with the app key. */
export const APP_TOKEN_ISSUER = 'persona-mcp-workspace';
export const DEFAULT_TOKEN_LIFETIME = '30d';
export const TOKEN_STORE_FILE = 'agent-tokens.json';

const MAX_LIFETIME_DAYS = 3650;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** What the page and the CLI may see of a token: everything but the token. */
export type AgentTokenInfo = TokenRecord;

export interface CreateAgentTokenInput {
  name: string;
  /** `<n>m`, `<n>h`, `<n>d` (up to 3650 days) or `never`; default 30d. */
  expiresIn?: string;
  /** Becomes the `workspace_path` claim: the place the agent works in. */
  workspacePath?: string;
}

/** The one moment the token itself is available. */
export interface CreatedAgentToken {
  id: string;
  token: string;
  name: string;
  createdAt: string;
  expiresAt?: string | undefined;
  workspacePath?: string | undefined;
}

export type AgentTokenStatus = 'active' | 'revoked' | 'unknown';

/** A name, lifetime or path given to `create` is not acceptable; the message says why. */
export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
}

export class UnknownTokenError extends Error {
  override readonly name = 'UnknownTokenError';
  constructor(id: string) {
    // Echo the id only if it looks like one: a user may paste the token itself by mistake.
    super(`No agent token ${ID_PATTERN.test(id) ? `with id ${id}` : 'has that id'}. List the tokens to see their ids.`);
  }
}

const ID_PATTERN = /^[0-9a-f]{16}$/;

/** Milliseconds, or `null` for `never`. Tokens that never expire are allowed: they are checked against the store on every use, so revoking one takes effect at once. */
export function parseTokenLifetime(text: string): number | null {
  const value = text.trim().toLowerCase();
  if (value === 'never') return null;
  const match = /^([1-9][0-9]{0,6})([mhd])$/.exec(value);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms <= MAX_LIFETIME_DAYS * UNIT_MS.d)) {
    throw new TokenInputError(
      `Invalid token lifetime "${text}": use a whole number of minutes, hours or days up to ${MAX_LIFETIME_DAYS}d (like 90m, 12h, 30d), or "never".`,
    );
  }
  return ms;
}

function validName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > 64 || /\p{C}/u.test(trimmed)) {
    throw new TokenInputError('A token name must be 1 to 64 printable characters.');
  }
  return trimmed;
}

function validWorkspacePath(path: string): string {
  // Bidi and invisible characters too, as in place roots: the path must read as the place it names.
  if (path.length < 1 || path.length > 4096 || hasUnprintable(path)) {
    throw new TokenInputError('A token workspace path must be 1 to 4096 characters with no control, bidi or invisible characters.');
  }
  return path;
}

export interface AgentTokenStoreOptions {
  stateDir: string;
  /** Defaults to `<stateDir>/agent-signing-key`. */
  keySource?: SigningKeySource;
  now?: () => Date;
}

/**
 * The app's own agent tokens: HS256 JWTs (`sub: token:<id>`, `jti: <id>`, `iss`, `kid` = key id)
 * and their records in `<stateDir>/agent-tokens.json`.
 */
export class AgentTokenStore {
  private readonly file: TokenFile;
  private readonly keySource: SigningKeySource;
  private readonly now: () => Date;
  private key: Promise<{ key: Uint8Array; keyId: string }> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: AgentTokenStoreOptions) {
    this.file = new TokenFile(join(options.stateDir, TOKEN_STORE_FILE));
    this.keySource = options.keySource ?? new FileSigningKeySource(options.stateDir);
    this.now = options.now ?? (() => new Date());
  }

  /** The key (loaded once; retried after a failure, e.g. once the user fixed its mode) and its `kid`. */
  signingKey(): Promise<{ key: Uint8Array; keyId: string }> {
    this.key ??= this.keySource.load().then(
      (key) => ({ key, keyId: keyIdOf(key) }),
      (error: unknown) => {
        this.key = undefined;
        throw error;
      },
    );
    return this.key;
  }

  async create(input: CreateAgentTokenInput): Promise<CreatedAgentToken> {
    const name = validName(input.name);
    const lifetime = parseTokenLifetime(input.expiresIn ?? DEFAULT_TOKEN_LIFETIME);
    const workspacePath = input.workspacePath === undefined ? undefined : validWorkspacePath(input.workspacePath);
    const { key, keyId } = await this.signingKey();
    // Only creating signs: listing and revoking (most token commands) never load the JWT library.
    const { SignJWT } = await import('jose');

    return this.exclusive(async (records, write) => {
      let id: string;
      do id = randomBytes(8).toString('hex');
      while (records.has(id));

      const issuedAt = Math.floor(this.now().getTime() / 1000);
      const expiresAt = lifetime === null ? undefined : issuedAt + Math.floor(lifetime / 1000);
      const record: TokenRecord = {
        id,
        name,
        createdAt: new Date(issuedAt * 1000).toISOString(),
        ...(expiresAt !== undefined && { expiresAt: new Date(expiresAt * 1000).toISOString() }),
        ...(workspacePath !== undefined && { workspacePath }),
      };
      // Recorded before it exists: a token is never handed out without its record.
      await write([...records.values(), record]);

      const jwt = new SignJWT(workspacePath === undefined ? {} : { workspace_path: workspacePath })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keyId })
        .setIssuer(APP_TOKEN_ISSUER)
        .setSubject(`token:${id}`)
        .setJti(id)
        .setIssuedAt(issuedAt);
      if (expiresAt !== undefined) jwt.setExpirationTime(expiresAt);
      return { ...record, token: await jwt.sign(key) };
    });
  }

  /** All tokens, oldest first, including revoked and expired ones. */
  async list(): Promise<AgentTokenInfo[]> {
    return [...(await this.file.records()).values()];
  }

  /** Revokes at once, here and in every process using the same state dir. Revoking twice is harmless. */
  async revoke(id: string): Promise<AgentTokenInfo> {
    return this.exclusive(async (records, write) => {
      const record = records.get(id);
      if (!record) throw new UnknownTokenError(id);
      if (record.revokedAt) return record;
      const revoked = { ...record, revokedAt: this.now().toISOString() };
      await write([...records.values()].map((r) => (r.id === id ? revoked : r)));
      return revoked;
    });
  }

  /** Sets whether agents using this token get tool search; `auto` leaves it to the place. */
  async setToolSearch(id: string, mode: ToolSearchMode): Promise<AgentTokenInfo> {
    return this.exclusive(async (records, write) => {
      const record = records.get(id);
      if (!record) throw new UnknownTokenError(id);
      const { toolSearch: _, ...rest } = record;
      const changed: TokenRecord = mode === 'auto' ? rest : { ...rest, toolSearch: mode };
      await write([...records.values()].map((r) => (r.id === id ? changed : r)));
      return changed;
    });
  }

  /** A token's own tool search setting, on every tools/list of its sessions: one `stat` unless the store changed. */
  async toolSearch(id: string): Promise<ToolSearchMode> {
    return (await this.file.records()).get(id)?.toolSearch ?? 'auto';
  }

  /** For the verifier, on every request: one `stat` unless the store changed. */
  async status(id: string): Promise<AgentTokenStatus> {
    const record = (await this.file.records()).get(id);
    if (!record) return 'unknown';
    return record.revokedAt ? 'revoked' : 'active';
  }

  /** Read-modify-write runs one at a time: in this process by a queue, across processes by the file's lock (re-reading inside it). */
  private exclusive<T>(
    task: (records: ReadonlyMap<string, TokenRecord>, write: (records: Iterable<TokenRecord>) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const run = this.queue.then(() => this.file.update(task));
    this.queue = run.catch(() => {});
    return run;
  }
}
