import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_STEP_UPS, StepUps } from './step-ups.js';

describe('StepUps', () => {
  it('asks for the scopes the challenge names together with those granted, and is met by the next sign-in', () => {
    const stepUps = new StepUps();
    const { need, fresh } = stepUps.refused('c', 'token-1', 'mcp:basic', 'mcp:basic mcp:write');
    assert.equal(fresh, true);
    assert.deepEqual(need, { kind: 'step-up', scope: 'mcp:basic mcp:write', added: ['mcp:write'] });
    assert.equal(stepUps.refused('c', 'token-1', 'mcp:basic', 'mcp:basic mcp:write').fresh, false, 'a login counts once');
    assert.equal(stepUps.beginning('c'), 'mcp:basic mcp:write');
    stepUps.signedIn('c');
    assert.equal(stepUps.need('c'), undefined);
    assert.equal(stepUps.beginning('c'), undefined);
  });

  it('allows one more sign-in when the server refuses scopes already granted, then stops', () => {
    const stepUps = new StepUps();
    assert.equal(stepUps.refused('c', 'token-1', 'mcp:admin', 'mcp:admin').need.kind, 'step-up');
    stepUps.signedIn('c');
    assert.deepEqual(stepUps.refused('c', 'token-2', 'mcp:admin', 'mcp:admin').need, { kind: 'exhausted', scope: 'mcp:admin', signIns: 1 });
    assert.equal(stepUps.need('c')?.kind, 'exhausted');
    // The owner's own sign-in afterwards starts afresh, asking for that access.
    assert.equal(stepUps.beginning('c'), 'mcp:admin');
    assert.equal(stepUps.need('c'), undefined);
  });

  it(`stops after ${MAX_STEP_UPS} step-ups even when each names a new scope`, () => {
    const stepUps = new StepUps();
    let granted = 'a';
    for (let i = 1; i <= MAX_STEP_UPS; i += 1) {
      const { need } = stepUps.refused('c', `token-${i}`, granted, `s${i}`);
      assert.equal(need.kind, 'step-up');
      granted = need.scope;
      stepUps.signedIn('c');
    }
    assert.equal(stepUps.refused('c', 'token-last', granted, 'another').need.kind, 'exhausted');
    stepUps.forget('c');
    assert.equal(stepUps.need('c'), undefined);
  });
});
