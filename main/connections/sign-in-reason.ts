import type { LoginEnd } from './upstream-oauth/oauth-store.js';

/**
 * Why an OAuth connection needs a sign-in: never signed in, or the provider ended its login. Said
 * to the connection's owner (`owner` undefined) as what to do; to anyone else, who can do it.
 */
export function signInReason(ended: LoginEnd | undefined, owner: string | undefined): string {
  const whatNext = (what: string) => (owner === undefined ? `: ${what}.` : `; only ${owner}, who added it, can ${what}.`);
  switch (ended) {
    case undefined:
      return owner === undefined ? 'Not signed in yet.' : `Not signed in yet; only ${owner}, who added it, can sign in.`;
    case 'grant':
      return `The login ended at the provider (revoked there, or expired)${whatNext('sign in again')}`;
    case 'client':
      return `The provider no longer accepts this app's registration, so the login ended${whatNext('sign in again (the app registers anew)')}`;
    case 'own-app':
      return `The provider refused the client ID or secret of the OAuth app given for this connection, so the login ended${whatNext('check them and sign in again')}`;
    case 'client-credentials':
      return `The provider refused the client credentials set for this connection, so the login ended${whatNext('check them, set them again and connect')}`;
    case 'no-refresh-token':
      return `The login expired and the provider gave no way to renew it${whatNext('sign in again')}`;
  }
}
