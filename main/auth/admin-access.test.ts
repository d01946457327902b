import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdminAccess } from './admin-access.js';

describe('AdminAccess', () => {
  it('trades a login token for a session once', () => {
    const access = new AdminAccess();
    const token = access.createLoginToken();
    const session = access.redeem(token);
    assert.ok(session && access.isSession(session));
    assert.equal(access.redeem(token), undefined, 'a login link works once');
    access.endSession(session);
    assert.equal(access.isSession(session), false);
  });

  it('refuses an expired or unknown login token', () => {
    const access = new AdminAccess(1_000);
    const token = access.createLoginToken(0);
    assert.equal(access.redeem(token, 2_000), undefined);
    assert.equal(access.redeem('made-up'), undefined);
  });

  it('knows its admin token and nothing else', () => {
    const access = new AdminAccess();
    assert.equal(access.isAdminToken(access.adminToken), true);
    assert.equal(access.isAdminToken(`${access.adminToken}x`), false);
    assert.equal(access.isAdminToken(''), false);
    assert.notEqual(new AdminAccess().adminToken, access.adminToken);
  });
});
