/**
 * A server's refusal for lack of scope (403 with `error="insufficient_scope"`) turns into a need
 * for wider access, which only the connection's owner can grant by signing in again (step-up).
 *
 * Bounded: a refusal that names no scope beyond those the current login was given means signing
 * in again may not help (the person declined some, or the provider will not grant them); one such
 * retry is allowed, the next one ends the step-ups. At most MAX_STEP_UPS step-ups run per
 * connection in all, so a server that keeps naming new scopes cannot loop either. Each login
 * counts once, however many of its requests are refused.
 *
 * Pure functions over the connection's step-up record, which is kept with its login (OAuthStore),
 * so every process showing the connection (the host, the CLI) sees the same need.
 */
export const MAX_STEP_UPS = 3;
const MAX_REPEATS = 1;

/** What a connection needs now: a step-up sign-in for `scope`, or nothing more can be done by signing in. */
export type StepUpNeed = { kind: 'step-up'; scope: string; added: string[] } | { kind: 'exhausted'; scope: string; signIns: number };

export interface StepUpRecord {
  need?: StepUpNeed;
  /** Step-ups asked for so far, and how many of them in a row added no scope. */
  stepUps: number;
  repeats: number;
  /** A fingerprint of the login (access token) whose refusal was counted last. */
  counted?: string;
}

/**
 * The server refused the login `login` (granted `granted`) for lack of `challenged`: records the
 * need. Returns the new record, the need, and whether it is new (the first refusal of this login).
 */
export function refused(
  record: StepUpRecord | undefined,
  login: string,
  granted: string | undefined,
  challenged: string | undefined,
): { record: StepUpRecord; need: StepUpNeed; fresh: boolean } {
  if (record?.need && record.counted === login) return { record, need: record.need, fresh: false };
  const have = scopes(granted);
  const wanted = union(have, scopes(challenged));
  const added = wanted.filter((s) => !have.includes(s));
  const repeats = added.length ? 0 : (record?.repeats ?? 0) + 1;
  const stepUps = (record?.stepUps ?? 0) + 1;
  const need: StepUpNeed =
    repeats > MAX_REPEATS || stepUps > MAX_STEP_UPS
      ? { kind: 'exhausted', scope: wanted.join(' '), signIns: stepUps - 1 }
      : { kind: 'step-up', scope: wanted.join(' '), added };
  return { record: { need, stepUps, repeats, counted: login }, need, fresh: true };
}

/**
 * A sign-in begins: a step-up one asks for the wanted scope. Begun by the owner after the
 * step-ups ended, it starts them afresh (their own try, not a loop).
 */
export function beginning(record: StepUpRecord | undefined): { record: StepUpRecord | undefined; scope: string | undefined } {
  if (record?.need?.kind === 'exhausted') return { record: undefined, scope: record.need.scope };
  return { record, scope: record?.need?.scope };
}

/** A sign-in finished: the need it answered is met until the server says otherwise. */
export function signedIn(record: StepUpRecord | undefined): StepUpRecord | undefined {
  if (!record?.need) return record;
  const { need: _met, ...rest } = record;
  return rest;
}

function scopes(text: string | undefined): string[] {
  return (text ?? '').split(' ').filter(Boolean);
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])];
}
