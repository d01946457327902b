import { randomBytes } from 'node:crypto';
import { SignInStateError } from './errors.js';

type Entry<T> =
  | { status: 'pending'; value: T; expiresAt: number }
  | { status: 'finished'; expiresAt: number }
  | { status: 'cancelled'; expiresAt: number };

/**
 * The sign-ins started here and waiting for the browser to come back, by their `state`: random,
 * single-use and expiring. The state is the only thing tying an answer to its connection, so two
 * sign-ins at once never mix. Kept in memory only: a restart ends every sign-in in progress.
 */
export class UpstreamSignInsInProgress<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Registers a sign-in made by `make` from its new state. */
  open(make: (state: string) => T): T {
    this.sweep();
    const state = randomBytes(32).toString('base64url');
    const value = make(state);
    this.entries.set(state, { status: 'pending', value, expiresAt: this.now() + this.ttlMs });
    return value;
  }

  /** Ends the sign-in of `state` and returns it; refuses a state that is missing, unknown, used or expired. */
  take(state: string | undefined): T {
    this.sweep();
    if (!state) {
      throw new SignInStateError(
        'The sign-in answer has no state, so it cannot be matched to a sign-in started here. Start the sign-in again from the Connections page.',
      );
    }
    const entry = this.entries.get(state);
    if (!entry) {
      throw new SignInStateError(
        'This sign-in answer does not match any sign-in started here (it may come from an old tab, or the app restarted since). Start the sign-in again from the Connections page.',
      );
    }
    if (entry.status === 'finished') {
      throw new SignInStateError(
        'This sign-in was already used: each sign-in link works once. If the connection is not signed in, start the sign-in again.',
      );
    }
    if (entry.status === 'cancelled') {
      throw new SignInStateError(
        'This sign-in was cancelled: its connection was removed or signed out meanwhile. Start the sign-in again if the connection is still there.',
      );
    }
    // Kept as used until it would have expired, so a replay is told so rather than "unknown".
    this.entries.set(state, { status: 'finished', expiresAt: entry.expiresAt });
    if (entry.expiresAt <= this.now()) {
      throw new SignInStateError(
        `This sign-in expired: it must be finished within ${Math.round(this.ttlMs / 60_000)} minutes. Start it again.`,
      );
    }
    return entry.value;
  }

  /** Cancels the sign-ins in progress that `match`, as when their connection is removed. */
  drop(match: (value: T) => boolean): void {
    for (const [state, entry] of this.entries) {
      if (entry.status === 'pending' && match(entry.value)) this.entries.set(state, { status: 'cancelled', expiresAt: entry.expiresAt });
    }
  }

  // Entries leave once they are past expiry by a further lifetime: late answers are still told why.
  private sweep(): void {
    const cutoff = this.now() - this.ttlMs;
    for (const [state, entry] of this.entries) if (entry.expiresAt <= cutoff) this.entries.delete(state);
  }
}
