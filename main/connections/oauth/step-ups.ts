/**
 * A server's refusal for lack of scope (403 with `error="insufficient_scope"`) turns into a need
 * for wider access, which only the connection's owner can grant by signing in again (step-up).
 *
 * Bounded: a refusal that names no scope beyond those the current login was given means signing
 * in again may not help (the person declined some, or the provider will not grant them); one such
 * retry is allowed, the next one ends the step-ups. At most MAX_STEP_UPS step-ups run per
 * connection in all, so a server that keeps naming new scopes cannot loop either. Each login
 * counts once, however many of its requests are refused.
 */
export const MAX_STEP_UPS = 3;
const MAX_REPEATS = 1;

/** What a connection needs now: a step-up sign-in for `scope`, or nothing more can be done by signing in. */
export type StepUpNeed = { kind: 'step-up'; scope: string; added: string[] } | { kind: 'exhausted'; scope: string; signIns: number };

interface Entry {
  need: StepUpNeed | undefined;
  /** Step-ups asked for so far, and how many of them in a row added no scope. */
  stepUps: number;
  repeats: number;
  /** The access token whose refusal was counted last. */
  counted: string | undefined;
}

export class StepUps {
  private readonly entries = new Map<string, Entry>();

  /**
   * The server refused `token` (granted `granted`) for lack of `challenged`: records the need.
   * Returns it, and whether it is new (the first refusal of this token).
   */
  refused(key: string, token: string, granted: string | undefined, challenged: string | undefined): { need: StepUpNeed; fresh: boolean } {
    const entry = this.entries.get(key) ?? { need: undefined, stepUps: 0, repeats: 0, counted: undefined };
    this.entries.set(key, entry);
    if (entry.counted === token && entry.need) return { need: entry.need, fresh: false };
    entry.counted = token;
    const have = scopes(granted);
    const wanted = union(have, scopes(challenged));
    const added = wanted.filter((s) => !have.includes(s));
    entry.repeats = added.length ? 0 : entry.repeats + 1;
    entry.stepUps += 1;
    const signIns = entry.stepUps;
    entry.need =
      entry.repeats > MAX_REPEATS || entry.stepUps > MAX_STEP_UPS ? { kind: 'exhausted', scope: wanted.join(' '), signIns: signIns - 1 } : { kind: 'step-up', scope: wanted.join(' '), added };
    return { need: entry.need, fresh: true };
  }

  need(key: string): StepUpNeed | undefined {
    return this.entries.get(key)?.need;
  }

  /**
   * A sign-in begins: a step-up one asks for the wanted scope. Begun by the owner after the
   * step-ups ended, it starts them afresh (their own try, not a loop).
   */
  beginning(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (entry?.need?.kind === 'exhausted') {
      const { scope } = entry.need;
      this.entries.delete(key);
      return scope;
    }
    return entry?.need?.scope;
  }

  /** A sign-in finished: the need it answered is met until the server says otherwise. */
  signedIn(key: string): void {
    const entry = this.entries.get(key);
    if (entry) entry.need = undefined;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

function scopes(text: string | undefined): string[] {
  return (text ?? '').split(' ').filter(Boolean);
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}
