import { randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a one-time login link works. */
export const LOGIN_LINK_TTL_MS = 10 * 60_000;

/**
 * Who may use the control plane as `local`: the desktop window (the admin token, handed over by
 * the preload) and browsers that opened a one-time login link printed by the CLI (a session
 * cookie). Everything lives in memory: a restart signs every page out.
 */
export class AdminAccess {
  /** For the desktop shell's own window; never printed. */
  readonly adminToken = secret();
  private readonly loginTokens = new Map<string, number>();
  private readonly sessions = new Set<string>();

  constructor(readonly loginTtlMs = LOGIN_LINK_TTL_MS) {}

  /** A token for one login link; it works once, within the time to live. */
  createLoginToken(now = Date.now()): string {
    const token = secret();
    this.loginTokens.set(token, now + this.loginTtlMs);
    return token;
  }

  /** Trades a login token for a session id (the cookie), or undefined if used, expired or unknown. */
  redeem(loginToken: string, now = Date.now()): string | undefined {
    const expires = this.loginTokens.get(loginToken);
    this.loginTokens.delete(loginToken);
    if (expires === undefined || expires < now) return undefined;
    const session = secret();
    this.sessions.add(session);
    return session;
  }

  isAdminToken(value: string): boolean {
    const a = Buffer.from(value);
    const b = Buffer.from(this.adminToken);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  isSession(value: string): boolean {
    return this.sessions.has(value);
  }

  endSession(value: string): void {
    this.sessions.delete(value);
  }
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}
