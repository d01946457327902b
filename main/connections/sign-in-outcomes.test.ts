import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignInOutcomes } from './sign-in-outcomes.js';

const url = (state: string) => `https://as.example/authorize?client_id=c&state=${state}`;

describe('SignInOutcomes', () => {
  it('is pending from the start, failed with the reason when the answer is a failure, and empty after a success', () => {
    let now = 1_000;
    const outcomes = new SignInOutcomes(60_000, () => now);
    outcomes.begun('s/a', url('one'));
    assert.deepEqual(outcomes.of('s/a'), { state: 'pending', since: 1_000 });
    now = 2_000;
    outcomes.ended('one', { ok: false, message: 'declined' });
    assert.deepEqual(outcomes.of('s/a'), { state: 'failed', reason: 'declined', at: 2_000 });
    outcomes.begun('s/a', url('two'));
    outcomes.ended('two', { ok: true });
    assert.equal(outcomes.of('s/a'), undefined);
  });

  it('ignores answers to states it never began, and to an earlier sign-in of the same connection', () => {
    const outcomes = new SignInOutcomes(60_000);
    outcomes.ended('unknown', { ok: false, message: 'x' });
    outcomes.begun('s/a', url('old'));
    outcomes.begun('s/a', url('new'));
    outcomes.ended('old', { ok: false, message: 'stale' });
    assert.equal(outcomes.of('s/a')?.state, 'pending');
    outcomes.begun('s/b', url('b'));
    outcomes.ended('new', { ok: false, message: 'a failed' });
    assert.equal(outcomes.of('s/b')?.state, 'pending', "one connection's answer never touches another");
  });

  it('turns a sign-in not finished in time into a failure that says so', () => {
    let now = 0;
    const outcomes = new SignInOutcomes(10 * 60_000, () => now);
    outcomes.begun('s/a', url('slow'));
    now = 10 * 60_000;
    const outcome = outcomes.of('s/a');
    assert.equal(outcome?.state, 'failed');
    assert.match(outcome?.state === 'failed' ? outcome.reason : '', /not finished within 10 minutes/);
  });

  it('forgets a connection that signed in or went away', () => {
    const outcomes = new SignInOutcomes(60_000);
    outcomes.begun('s/a', url('s'));
    outcomes.forget('s/a');
    assert.equal(outcomes.of('s/a'), undefined);
    outcomes.ended('s', { ok: false, message: 'late' });
    assert.equal(outcomes.of('s/a'), undefined);
  });
});
