import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignInStateError } from './errors.js';
import { UpstreamSignInsInProgress } from './sign-ins-in-progress.js';

const TTL = 10 * 60_000;

function pending() {
  const clock = { now: 1_000_000 };
  const signIns = new UpstreamSignInsInProgress<{ connection: string; state: string }>(TTL, () => clock.now);
  const open = (connection: string) => signIns.open((state) => ({ connection, state }));
  return { clock, signIns, open };
}

describe('UpstreamSignInsInProgress', () => {
  it('ties each state to the sign-in it was made for, with a fresh random state each time', () => {
    const { signIns, open } = pending();
    const a = open('a');
    const b = open('b');
    assert.notEqual(a.state, b.state);
    assert.match(a.state, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.equal(signIns.take(b.state).connection, 'b');
    assert.equal(signIns.take(a.state).connection, 'a');
  });

  it('takes a state once: a replay is refused as already used', () => {
    const { signIns, open } = pending();
    const { state } = open('a');
    signIns.take(state);
    assert.throws(
      () => signIns.take(state),
      (error: Error) => error instanceof SignInStateError && /already used/.test(error.message),
    );
  });

  it('refuses a missing or unknown state', () => {
    const { signIns, open } = pending();
    open('a');
    assert.throws(
      () => signIns.take(undefined),
      (error: Error) => error instanceof SignInStateError && /has no state/.test(error.message),
    );
    assert.throws(
      () => signIns.take('forged'),
      (error: Error) => error instanceof SignInStateError && /does not match any sign-in/.test(error.message),
    );
  });

  it('refuses a state after its lifetime, and the refusal uses it up', () => {
    const { clock, signIns, open } = pending();
    const { state } = open('a');
    clock.now += TTL;
    assert.throws(
      () => signIns.take(state),
      (error: Error) => error instanceof SignInStateError && /expired: it must be finished within 10 minutes/.test(error.message),
    );
    assert.throws(() => signIns.take(state), /already used/);
  });

  it('accepts a state just before its lifetime ends', () => {
    const { clock, signIns, open } = pending();
    const { state } = open('a');
    clock.now += TTL - 1;
    assert.equal(signIns.take(state).connection, 'a');
  });

  it('cancels the matching sign-ins only, and says so to their answers', () => {
    const { signIns, open } = pending();
    const a = open('a');
    const b = open('b');
    signIns.drop((value) => value.connection === 'a');
    assert.throws(() => signIns.take(a.state), /was cancelled/);
    assert.equal(signIns.take(b.state).connection, 'b');
  });

  it('forgets states a lifetime after they expired, so memory does not grow', () => {
    const { clock, signIns, open } = pending();
    const { state } = open('a');
    clock.now += 2 * TTL;
    open('b');
    assert.throws(() => signIns.take(state), /does not match any sign-in/);
  });
});
