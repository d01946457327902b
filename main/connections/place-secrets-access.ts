import type { AccessDirectory } from '../places/access-directory.js';
import type { Place } from '../places/place-root.js';
import { PlaceSecretExistsError, type PlaceSecrets } from '../secrets/place-secrets.js';
import { ConnectionRequestError, requireEdit, requireRead } from './place-rules.js';
import type { ConnectionStore, PlaceConnection } from './store/connection-store.js';

export interface PlaceSecretsAccessDeps {
  access: AccessDirectory;
  placeSecrets: PlaceSecrets;
  store: ConnectionStore;
}

/**
 * A place's secrets under the place connections spec's rules (place-mcp-connections.md): readers see the names (never the values), editors set
 * and remove them. Apart from the connections so that the `secrets` commands load none of the
 * gateway, OAuth or catalog code.
 */
export class PlaceSecretsAccess {
  constructor(private readonly deps: PlaceSecretsAccessDeps) {}

  async names(person: string, place: Place): Promise<string[]> {
    requireRead(await this.deps.access.snapshot(), person, place);
    return this.deps.placeSecrets.names(place.root);
  }

  /**
   * Saves a place secret. One the place already has is replaced only when `replace` says so: other
   * connections may send it, and a new key under a name in use would silently change what they send.
   * Answers the place's connections that send it.
   */
  async set(person: string, place: Place, name: string, value: string, options: { replace: boolean }): Promise<PlaceConnection[]> {
    requireEdit(await this.deps.access.snapshot(), person, place, 'set secrets of');
    try {
      await this.deps.placeSecrets.set(place.root, name, value, options);
    } catch (error) {
      if (!(error instanceof PlaceSecretExistsError)) throw error;
      const users = (await this.senders(place, name)).map((c) => c.displayName);
      const sending = users.length ? ` ${users.join(', ')} ${users.length === 1 ? 'sends' : 'send'} it.` : '';
      throw new ConnectionRequestError(
        `${place.label} already has a secret named "${name}"; it was not changed.${sending} Replace its value only if you mean to (agree to replace it, or --replace), or choose another name.`,
        409,
      );
    }
    return this.senders(place, name);
  }

  async remove(person: string, place: Place, name: string): Promise<void> {
    requireEdit(await this.deps.access.snapshot(), person, place, 'remove secrets of');
    await this.deps.placeSecrets.remove(place.root, name);
  }

  private async senders(place: Place, name: string): Promise<PlaceConnection[]> {
    return (await this.deps.store.list(place.root)).filter(
      (c) =>
        (c.auth.kind === 'header' && c.auth.secretName === name) || (c.transport === 'stdio' && c.local.env.some((e) => e.secret === name)),
    );
  }
}
