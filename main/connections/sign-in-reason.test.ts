import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signInReason } from './sign-in-reason.js';

describe('signInReason', () => {
  it('tells the owner what to do, and anyone else who can do it, for a login never made and for each way a provider ends one', () => {
    const cases: Array<[Parameters<typeof signInReason>[0], string, string]> = [
      [undefined, 'Not signed in yet.', 'Not signed in yet; only Ana, who added it, can sign in.'],
      [
        'grant',
        'The login ended at the provider (revoked there, or expired): sign in again.',
        'The login ended at the provider (revoked there, or expired); only Ana, who added it, can sign in again.',
      ],
      [
        'client',
        "The provider no longer accepts this app's registration, so the login ended: sign in again (the app registers anew).",
        "The provider no longer accepts this app's registration, so the login ended; only Ana, who added it, can sign in again (the app registers anew).",
      ],
      [
        'own-app',
        'The provider refused the client ID or secret of the OAuth app given for this connection, so the login ended: check them and sign in again.',
        'The provider refused the client ID or secret of the OAuth app given for this connection, so the login ended; only Ana, who added it, can check them and sign in again.',
      ],
      [
        'no-refresh-token',
        'The login expired and the provider gave no way to renew it: sign in again.',
        'The login expired and the provider gave no way to renew it; only Ana, who added it, can sign in again.',
      ],
    ];
    for (const [ended, toOwner, toOthers] of cases) {
      assert.equal(signInReason(ended, undefined), toOwner);
      assert.equal(signInReason(ended, 'Ana'), toOthers);
    }
  });
});
