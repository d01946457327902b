import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignInChains } from './sign-in-chains.js';

const url = (state: string) => `https://auth.example/authorize?client_id=c&state=${state}`;

describe('SignInChains', () => {
  it('sends the browser from each sign-in to the next, and gives every outcome at the end', () => {
    const chains = new SignInChains(60_000, () => 0);
    const first = chains.add([
      { displayName: 'A', authorizationUrl: url('s1') },
      { displayName: 'B', authorizationUrl: url('s2') },
      { displayName: 'C', authorizationUrl: url('s3') },
    ]);
    assert.equal(first, url('s1'));
    assert.deepEqual(chains.advance('s1', { ok: true }), { next: url('s2') });
    assert.deepEqual(chains.advance('s2', { ok: false, message: 'declined' }), { next: url('s3') });
    assert.deepEqual(chains.advance('s3', { ok: true }), {
      outcomes: [
        { displayName: 'A', ok: true },
        { displayName: 'B', ok: false, message: 'declined' },
        { displayName: 'C', ok: true },
      ],
    });
  });

  it('knows nothing of a sign-in outside a chain, a used step, or an expired chain', () => {
    let now = 0;
    const chains = new SignInChains(1_000, () => now);
    chains.add([
      { displayName: 'A', authorizationUrl: url('a1') },
      { displayName: 'B', authorizationUrl: url('a2') },
    ]);
    assert.equal(chains.advance('elsewhere', { ok: true }), undefined);
    assert.equal(chains.advance(undefined, { ok: true }), undefined);
    assert.deepEqual(chains.advance('a1', { ok: true }), { next: url('a2') });
    assert.equal(chains.advance('a1', { ok: true }), undefined, 'each step is used once');
    now = 1_000;
    assert.equal(chains.advance('a2', { ok: true }), undefined, 'expired with its sign-ins');
  });

  it('keeps two chains apart', () => {
    const chains = new SignInChains(60_000, () => 0);
    chains.add([
      { displayName: 'A', authorizationUrl: url('x1') },
      { displayName: 'B', authorizationUrl: url('x2') },
    ]);
    chains.add([
      { displayName: 'C', authorizationUrl: url('y1') },
      { displayName: 'D', authorizationUrl: url('y2') },
    ]);
    assert.deepEqual(chains.advance('y1', { ok: true }), { next: url('y2') });
    assert.deepEqual(chains.advance('x1', { ok: true }), { next: url('x2') });
    assert.deepEqual(chains.advance('y2', { ok: true }), {
      outcomes: [
        { displayName: 'C', ok: true },
        { displayName: 'D', ok: true },
      ],
    });
  });

  it('refuses an empty chain or a URL without a state', () => {
    const chains = new SignInChains(60_000, () => 0);
    assert.throws(() => chains.add([]), /at least one/);
    assert.throws(() => chains.add([{ displayName: 'A', authorizationUrl: 'https://auth.example/authorize' }]), /without a state/);
  });
});
