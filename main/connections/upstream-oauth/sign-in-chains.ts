/** How one sign-in of a chain ended, for the page shown when the chain is done. */
export interface ChainOutcome {
  displayName: string;
  ok: boolean;
  /** Why it failed, in words a person can act on. */
  message?: string;
}

/** Where the browser goes after a chained sign-in: on to the next one, or, at the chain's end, nowhere. */
export type ChainStep = { next: string } | { outcomes: ChainOutcome[] };

interface Link {
  displayName: string;
  /** The authorization URL of the next sign-in in the chain, if any. */
  next: string | undefined;
  outcomes: ChainOutcome[];
  expiresAt: number;
}

/**
 * Sign-ins run one after another in the same browser window, for a sign-in group: when one comes
 * back to the callback, the browser goes on to the next one's authorization URL. The provider
 * already has the person's session by then, so where it allows, they sign in once and every
 * service of the group is connected. Each service still gets its own authorization and tokens
 * (each for its own resource), so the tokens stay bound to the server they are for.
 */
export class SignInChains {
  private readonly links = new Map<string, Link>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Chains the sign-ins, in order; returns the URL to open first. */
  add(signIns: { displayName: string; authorizationUrl: string }[]): string {
    this.sweep();
    const first = signIns[0];
    if (!first) throw new Error('A sign-in chain needs at least one sign-in.');
    const outcomes: ChainOutcome[] = [];
    const expiresAt = this.now() + this.ttlMs;
    signIns.forEach((signIn, index) => {
      this.links.set(stateOf(signIn.authorizationUrl), {
        displayName: signIn.displayName,
        next: signIns[index + 1]?.authorizationUrl,
        outcomes,
        expiresAt,
      });
    });
    return first.authorizationUrl;
  }

  /**
   * Records how the sign-in of `state` ended. Returns where the browser goes next, or, at the
   * chain's end, every outcome of the chain; undefined for a sign-in that is not in a chain.
   */
  advance(state: string | undefined, outcome: { ok: boolean; message?: string }): ChainStep | undefined {
    const link = state === undefined ? undefined : this.links.get(state);
    if (!link || link.expiresAt <= this.now()) return undefined;
    this.links.delete(state!);
    link.outcomes.push({ displayName: link.displayName, ...outcome });
    return link.next ? { next: link.next } : { outcomes: [...link.outcomes] };
  }

  private sweep(): void {
    for (const [state, link] of this.links) if (link.expiresAt <= this.now()) this.links.delete(state);
  }
}

function stateOf(authorizationUrl: string): string {
  const state = new URL(authorizationUrl).searchParams.get('state');
  if (!state) throw new Error('An authorization URL without a state cannot be chained.');
  return state;
}
