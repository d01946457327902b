import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { beginning, MAX_STEP_UPS, refused, signedIn, type StepUpRecord } from './step-ups.js';

describe('step-ups', () => {
  it('asks for the scopes the challenge names together with those granted, and is met by the next sign-in', () => {
    const first = refused(undefined, 'login-1', 'mcp:basic', 'mcp:basic mcp:write');
    assert.equal(first.fresh, true);
    assert.deepEqual(first.need, { kind: 'step-up', scope: 'mcp:basic mcp:write', added: ['mcp:write'] });
    const again = refused(first.record, 'login-1', 'mcp:basic', 'mcp:basic mcp:write');
    assert.equal(again.fresh, false, 'a login counts once');
    assert.equal(again.record, first.record);
    const begun = beginning(first.record);
    assert.equal(begun.scope, 'mcp:basic mcp:write');
    const met = signedIn(begun.record);
    assert.equal(met?.need, undefined);
    assert.equal(beginning(met).scope, undefined);
  });

  it('allows one more sign-in when the server refuses scopes already granted, then stops', () => {
    const first = refused(undefined, 'login-1', 'mcp:admin', 'mcp:admin');
    assert.equal(first.need.kind, 'step-up');
    const second = refused(signedIn(first.record), 'login-2', 'mcp:admin', 'mcp:admin');
    assert.deepEqual(second.need, { kind: 'exhausted', scope: 'mcp:admin', signIns: 1 });
    // The owner's own sign-in afterwards starts afresh, asking for that access.
    const begun = beginning(second.record);
    assert.equal(begun.scope, 'mcp:admin');
    assert.equal(begun.record, undefined);
  });

  it(`stops after ${MAX_STEP_UPS} step-ups even when each names a new scope`, () => {
    let record: StepUpRecord | undefined;
    let granted = 'a';
    for (let i = 1; i <= MAX_STEP_UPS; i += 1) {
      const result = refused(record, `login-${i}`, granted, `s${i}`);
      assert.equal(result.need.kind, 'step-up');
      granted = result.need.scope;
      record = signedIn(result.record);
    }
    assert.equal(refused(record, 'login-last', granted, 'another').need.kind, 'exhausted');
  });

  it('survives a trip through JSON, as it is kept with the login', () => {
    const { record } = refused(undefined, 'login-1', 'a', 'b');
    const back = JSON.parse(JSON.stringify(record)) as StepUpRecord;
    assert.equal(refused(back, 'login-1', 'a', 'b').fresh, false);
    assert.equal(beginning(back).scope, 'a b');
  });
});
