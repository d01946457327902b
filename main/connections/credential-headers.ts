import type { PlaceSecrets } from '../secrets/place-secrets.js';
import type { PlaceConnection } from './store/connection-store.js';

/**
 * The headers that carry a connection's credentials (an API key from its place's secrets), read
 * for the one outgoing request that needs them; none for a connection that signs in otherwise.
 */
export async function credentialHeaders(
  placeSecrets: Pick<PlaceSecrets, 'value'>,
  connection: PlaceConnection,
): Promise<Record<string, string>> {
  if (connection.auth.kind !== 'header') return {};
  const value = await placeSecrets.value(connection.root, connection.auth.secretName);
  return { [connection.auth.header]: `${connection.auth.prefix ?? ''}${value}` };
}
