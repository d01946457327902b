/** How a connection's last sign-in started here stands: still waiting for the browser, or failed and why. */
export type SignInOutcome = { state: 'pending'; since: number } | { state: 'failed'; reason: string; at: number };

/**
 * The outcome of each connection's last sign-in, so every surface (the page above all) learns that
 * a sign-in was denied or failed instead of waiting for it forever. A sign-in's `state` (in its
 * authorization URL) ties the browser's answer back to its connection. A success leaves nothing
 * here: the connection's own state says so. Kept in memory only, as the sign-ins are.
 */
export class SignInOutcomes {
  private readonly byConnection = new Map<string, SignInOutcome>();
  private readonly connectionOfState = new Map<string, { key: string; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sign-in of the connection `key` started with this authorization URL: it is pending now. */
  begun(key: string, authorizationUrl: string): void {
    this.sweep();
    const state = new URL(authorizationUrl).searchParams.get('state');
    // An earlier sign-in of the same connection no longer decides its outcome.
    for (const [s, entry] of this.connectionOfState) if (entry.key === key) this.connectionOfState.delete(s);
    if (state) this.connectionOfState.set(state, { key, expiresAt: this.now() + this.ttlMs });
    this.byConnection.set(key, { state: 'pending', since: this.now() });
  }

  /** The browser came back with the answer to the sign-in of `state`. */
  ended(state: string | undefined, outcome: { ok: boolean; message?: string }): void {
    const entry = state === undefined ? undefined : this.connectionOfState.get(state);
    if (!entry) return;
    this.connectionOfState.delete(state!);
    if (outcome.ok) this.byConnection.delete(entry.key);
    else
      this.byConnection.set(entry.key, {
        state: 'failed',
        reason: outcome.message ?? 'The sign-in failed. Start it again.',
        at: this.now(),
      });
  }

  /** The connection is signed in, signed out, or gone: its past sign-in says nothing any more. */
  forget(key: string): void {
    this.byConnection.delete(key);
    for (const [s, entry] of this.connectionOfState) if (entry.key === key) this.connectionOfState.delete(s);
  }

  /** The outcome of the connection's last sign-in; one never finished in time has failed. */
  of(key: string): SignInOutcome | undefined {
    const outcome = this.byConnection.get(key);
    if (outcome?.state === 'pending' && outcome.since + this.ttlMs <= this.now()) {
      const expired: SignInOutcome = {
        state: 'failed',
        reason: `The sign-in was not finished within ${Math.round(this.ttlMs / 60_000)} minutes. Start it again.`,
        at: this.now(),
      };
      this.byConnection.set(key, expired);
      return expired;
    }
    return outcome;
  }

  private sweep(): void {
    for (const [s, entry] of this.connectionOfState) if (entry.expiresAt <= this.now()) this.connectionOfState.delete(s);
  }
}
