import { selectClientAuthMethod } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describeFailure } from './errors.js';
import type { OAuthRecord, StoredClient, StoredServer } from './oauth-store.js';

/** What revoking a login at the provider achieved. */
export interface Revocation {
  /** The tokens the provider confirmed revoked. */
  revoked: Array<'refresh_token' | 'access_token'>;
  /** Why a token was not revoked, in words (the login is deleted here all the same). */
  problems: string[];
}

const LABEL = { refresh_token: 'refresh token', access_token: 'access token' } as const;

/**
 * Revokes the record's refresh and access tokens at the provider's revocation endpoint (RFC 7009),
 * the refresh token first since revoking it usually ends the whole grant. Failures are reported,
 * never thrown: forgetting a login must not depend on the provider.
 */
export async function revokeTokens(record: OAuthRecord, name: string, fetch: FetchLike): Promise<Revocation> {
  const { tokens, server, client } = record;
  const result: Revocation = { revoked: [], problems: [] };
  if (!tokens) return result;
  const endpoint = server?.metadata.revocation_endpoint;
  if (!endpoint || !server || !client) {
    result.problems.push(
      `${name} offers no way to revoke its tokens, so the login was only deleted here. It ends when its tokens expire, ` +
        `or at once if you remove this app's access in ${name}'s settings.`,
    );
    return result;
  }
  const secrets = [tokens.refresh_token, tokens.access_token, client.information.client_secret];
  for (const hint of ['refresh_token', 'access_token'] as const) {
    const token = tokens[hint];
    if (!token) continue;
    try {
      const headers = new Headers({ 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' });
      const body = new URLSearchParams({ token, token_type_hint: hint });
      authenticate(client, server, headers, body);
      const response = await fetch(endpoint, { method: 'POST', redirect: 'manual', headers, body });
      await response.body?.cancel();
      if (response.ok) result.revoked.push(hint);
      else
        result.problems.push(
          `${name} did not revoke the ${LABEL[hint]} (HTTP ${response.status}); the login was deleted here all the same.`,
        );
    } catch (error) {
      result.problems.push(
        `Could not reach ${name} to revoke the ${LABEL[hint]} (${describeFailure(error, secrets)}); the login was deleted here all the same.`,
      );
    }
  }
  return result;
}

/** Client authentication as the SDK does it at the token endpoint, with the revocation endpoint's methods. */
function authenticate({ information }: StoredClient, { metadata }: StoredServer, headers: Headers, body: URLSearchParams): void {
  const methods = metadata.revocation_endpoint_auth_methods_supported ?? metadata.token_endpoint_auth_methods_supported ?? [];
  const method = selectClientAuthMethod(information, methods);
  if (method === 'client_secret_basic' && information.client_secret) {
    headers.set('Authorization', `Basic ${Buffer.from(`${information.client_id}:${information.client_secret}`).toString('base64')}`);
    return;
  }
  body.set('client_id', information.client_id);
  if (method === 'client_secret_post' && information.client_secret) body.set('client_secret', information.client_secret);
}
