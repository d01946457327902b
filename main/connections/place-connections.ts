import type { AccessDirectory, AccessDirectorySnapshot } from '../places/access-directory.js';
import { canEdit, canRead, canRemoveConnection, editBlocker } from '../places/access-rules.js';
import type { Place } from '../places/place-root.js';
import type { ConnectionSecrets } from '../secrets/connection-secrets.js';
import type { PlaceSecrets } from '../secrets/place-secrets.js';
import type { CatalogEntry } from './catalog/catalog-schema.js';
import type { CatalogService } from './catalog/catalog-service.js';
import type { Gateway } from './gateway/gateway.js';
import type { CallbackAnswer, ChainStep, ConnectionOAuth, OwnApp } from './oauth/connection-oauth.js';
import { NetworkPolicyError } from './network/network-policy-error.js';
import { checkTarget, resolveWithSystem } from './network/target-check.js';
import { checkServerUrl } from './server-url.js';
import type { ConnectionAuth, ConnectionStore, PlaceConnection } from './store/connection-store.js';

/** Whether a connection works for the place's agents now, and if not, why. */
export type ConnectionState = 'connected' | 'paused' | 'needs-secret' | 'sign-in';

/** A connection as the page, the CLI and the agent tool show it: never a secret value. */
export interface ConnectionView {
  name: string;
  displayName: string;
  catalogId: string;
  url: string;
  transport: PlaceConnection['transport'];
  owner: string;
  /** The adder's name in the access directory, else their id. */
  ownerName: string;
  auth: ConnectionAuth['kind'];
  /** For API-key connections: the header and the place secret it is taken from. */
  header?: string;
  secretName?: string;
  state: ConnectionState;
  /** Why it is not connected, in words a person can act on. */
  reason?: string;
  /** Whether it uses the login of the person asking (only they can sign in to it). */
  mine: boolean;
  /** Whether the person asking may remove it. */
  canRemove: boolean;
  addedAt: string;
}

export type AddRequest =
  | { catalog: string; secret?: string }
  | { server: { url: string; name?: string; transport?: PlaceConnection['transport']; header?: { name: string; prefix?: string; secret: string } } };

interface Facts {
  secrets: string[];
  /** storeId + name of the OAuth connections with a login. */
  signedIn: Set<string>;
}

/** The person may not do this in this place. */
export class PlaceAccessError extends Error {
  override readonly name = 'PlaceAccessError';
}

/** The request names something that does not exist or does not fit; nothing was changed. */
export class ConnectionRequestError extends Error {
  override readonly name = 'ConnectionRequestError';
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

export interface PlaceConnectionsDeps {
  store: ConnectionStore;
  oauth: ConnectionOAuth;
  /** Opens a sign-in URL in the person's browser (the desktop app, $BROWSER, or printed). */
  openBrowser: (url: string) => void;
  /** Whether a server asks for a sign-in (answers an unauthenticated initialize with 401). */
  asksForSignIn: (url: string) => Promise<boolean>;
  access: AccessDirectory;
  catalog: CatalogService;
  placeSecrets: PlaceSecrets;
  connectionSecrets: ConnectionSecrets;
  gateway: Gateway;
  allowPrivateNetwork: boolean;
}

/**
 * A place's MCP connections under the spec's rules: who adds (editors), who removes (the adder or
 * an editor), who sees (readers), checked on every request and, for use, on every call.
 */
/** How long a place's secret names are trusted: another process (the CLI) may change them. */
const SECRET_NAMES_TTL_MS = 3_000;

export class PlaceConnections {
  // Asked on every agent call (usable()), so kept here: the keychain is a D-Bus round trip.
  private readonly secretNamesCache = new Map<string, { names: string[]; at: number }>();
  // This process is the only one that signs in and refreshes, and it hears every change.
  private readonly signInStates = new Map<string, 'signed-in' | 'sign-in'>();

  constructor(private readonly deps: PlaceConnectionsDeps) {
    deps.oauth.onStateChange((change) => this.signInStates.set(`${change.storeId}/${change.serverName}`, change.state));
  }

  async list(person: string, place: Place): Promise<ConnectionView[]> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connections = await this.deps.store.list(place.root);
    const facts = await this.facts(place, connections);
    return connections.map((c) => this.view(dir, person, place, c, facts));
  }

  async add(person: string, place: Place, request: AddRequest): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireEdit(dir, person, place, 'add connections to');
    const fields = 'catalog' in request ? this.fromCatalog(request) : await this.fromServer(request.server);
    if (fields.auth.kind === 'header') await this.requireSecret(place, fields.auth.secretName);
    const added = await this.deps.store.add({ owner: person, root: place.root, ...fields });
    return this.view(dir, person, place, added, await this.facts(place, [added]));
  }

  /**
   * The caller's own connection: for an OAuth server, starts the sign-in (the browser opens on the
   * provider's page; the answer comes back to /oauth/callback); for the others, reaches the server
   * with the credentials now and lists its tools.
   */
  async connect(
    person: string,
    place: Place,
    name: string,
    options: { ownApp?: OwnApp; openBrowser?: boolean } = {},
  ): Promise<{ connection: ConnectionView; tools: string[] } | { connection: ConnectionView; authorizationUrl: string }> {
    const [{ connection, view }] = await this.ownConnections(person, place, [name]);
    if (connection.auth.kind === 'oauth') {
      const { authorizationUrl } = await this.deps.oauth.begin(connection, options.ownApp ? { ownApp: options.ownApp } : {});
      if (options.openBrowser ?? true) this.deps.openBrowser(authorizationUrl);
      return { connection: view, authorizationUrl };
    }
    return { connection: view, tools: await this.toolNames(connection) };
  }

  /**
   * Connects several of the caller's connections at once, as a sign-in group's "Connect N
   * services": the OAuth ones sign in one after another in one browser window, so where the
   * provider keeps the person signed in they sign in once; the others connect now. Everything is
   * checked before anything starts.
   */
  async connectMany(
    person: string,
    place: Place,
    names: string[],
    options: { ownApp?: OwnApp; openBrowser?: boolean } = {},
  ): Promise<{ connections: ConnectionView[]; signIns: { name: string; authorizationUrl: string }[]; authorizationUrl?: string }> {
    const targets = await this.ownConnections(person, place, [...new Set(names)]);
    const signIns: { name: string; displayName: string; authorizationUrl: string }[] = [];
    for (const { connection } of targets) {
      if (connection.auth.kind === 'oauth') {
        const { authorizationUrl } = await this.deps.oauth.begin(connection, options.ownApp ? { ownApp: options.ownApp } : {});
        signIns.push({ name: connection.name, displayName: connection.displayName, authorizationUrl });
      } else {
        await this.toolNames(connection);
      }
    }
    const authorizationUrl = signIns.length ? this.deps.oauth.chain(signIns) : undefined;
    if (authorizationUrl && (options.openBrowser ?? true)) this.deps.openBrowser(authorizationUrl);
    return {
      connections: targets.map((t) => t.view),
      // Each one's own link too: opened alone (the chain's window was closed), it goes on through the rest.
      signIns: signIns.map(({ name, authorizationUrl }) => ({ name, authorizationUrl })),
      ...(authorizationUrl && { authorizationUrl }),
    };
  }

  /** The caller's own connections of these names, each ready to connect, or an error that says why not. */
  private async ownConnections(person: string, place: Place, names: string[]): Promise<{ connection: PlaceConnection; view: ConnectionView }[]> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connections = await this.deps.store.list(place.root);
    const found = names.map((name) => {
      const connection = connections.find((c) => c.name === name && c.owner === person) ?? connections.find((c) => c.name === name);
      if (!connection) throw notFound(place, name);
      if (connection.owner !== person) {
        throw new PlaceAccessError(`${connection.displayName} in ${place.label} uses ${nameOf(dir, connection.owner)}'s login; only they can sign in to it.`);
      }
      return connection;
    });
    const facts = await this.facts(place, found);
    return found.map((connection) => {
      const view = this.view(dir, person, place, connection, facts);
      if (connection.auth.kind === 'oauth' && view.state === 'paused') throw new ConnectionRequestError(`${connection.displayName} cannot sign in: ${view.reason}`, 409);
      if (connection.auth.kind !== 'oauth' && view.state !== 'connected') throw new ConnectionRequestError(`${connection.displayName} cannot connect: ${view.reason}`, 409);
      return { connection, view };
    });
  }

  private async toolNames(connection: PlaceConnection): Promise<string[]> {
    return (await this.deps.gateway.upstream(connection).tools()).map((t) => t.name);
  }

  /** Finishes a sign-in that the browser brought back to /oauth/callback. */
  async finishSignIn(answer: CallbackAnswer): Promise<{ displayName: string }> {
    return this.deps.oauth.finish(answer);
  }

  /** After a sign-in ended, well or not: in a chain, where the browser goes next, or every outcome at its end. */
  continueSignIns(state: string | undefined, outcome: { ok: boolean; message?: string }): ChainStep | undefined {
    return this.deps.oauth.advanceChain(state, outcome);
  }

  /** Removes a connection and deletes its login. `owner` picks whose, when several people added the same server. */
  async remove(person: string, place: Place, name: string, owner?: string): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    if (!canRemoveConnection(dir, person, place, connection.owner)) {
      throw new PlaceAccessError(`${nameOf(dir, person)} cannot remove ${connection.displayName} from ${place.label}: only the person who added it or an editor of the place can.`);
    }
    const removed = await this.deps.store.remove({ root: place.root, name, owner: connection.owner });
    await this.deps.gateway.drop(removed);
    // Removing it deletes that login: revoked at the provider where it can be, then gone from the keychain.
    const revocation = removed.auth.kind === 'oauth' ? await this.deps.oauth.revokeAndForget(removed) : undefined;
    if (!revocation) await this.deps.connectionSecrets.deleteAll({ storeId: removed.storeId, serverName: removed.name });
    const view = this.view(dir, person, place, removed, { secrets: [], signedIn: new Set() });
    return revocation?.problems.length ? { ...view, reason: `Removed, but revoking the login failed: ${revocation.problems.join(' ')}` } : view;
  }

  /** The names of the place's secrets (never their values), for anyone who can see the place. */
  async secretNames(person: string, place: Place): Promise<string[]> {
    requireRead(await this.deps.access.snapshot(), person, place);
    const names = await this.deps.placeSecrets.names(place.root);
    this.secretNamesCache.set(place.root, { names, at: Date.now() });
    return names;
  }

  async setSecret(person: string, place: Place, name: string, value: string): Promise<void> {
    requireEdit(await this.deps.access.snapshot(), person, place, 'set secrets of');
    this.secretNamesCache.delete(place.root);
    await this.deps.placeSecrets.set(place.root, name, value);
  }

  async removeSecret(person: string, place: Place, name: string): Promise<void> {
    requireEdit(await this.deps.access.snapshot(), person, place, 'remove secrets of');
    this.secretNamesCache.delete(place.root);
    await this.deps.placeSecrets.remove(place.root, name);
  }

  /** The connections agents in the place can use right now (adder still allowed, credentials present). */
  async usable(place: Place): Promise<PlaceConnection[]> {
    const dir = await this.deps.access.snapshot();
    const connections = await this.deps.store.list(place.root);
    const facts = await this.facts(place, connections);
    return connections.filter((c) => this.state(dir, place, c, facts).state === 'connected');
  }

  /** The credentials header of a connection, for the one outgoing request that needs it. */
  async credentials(connection: PlaceConnection): Promise<Record<string, string>> {
    if (connection.auth.kind !== 'header') return {};
    const value = await this.deps.placeSecrets.value(connection.root, connection.auth.secretName);
    return { [connection.auth.header]: `${connection.auth.prefix ?? ''}${value}` };
  }

  private fromCatalog(request: { catalog: string; secret?: string }): Omit<PlaceConnection, 'name' | 'addedAt' | 'owner' | 'storeId' | 'root'> {
    const entry = this.deps.catalog.list().entries.find((e) => e.id === request.catalog);
    if (!entry) throw new ConnectionRequestError(`There is no connector "${request.catalog}" in the catalog. Search the catalog for its id, or add it as a server that is not listed.`, 404);
    return { catalogId: entry.id, displayName: entry.name, url: entry.url, transport: entry.transport, auth: authFor(entry, request.secret) };
  }

  private async fromServer(server: Extract<AddRequest, { server: unknown }>['server']): Promise<Omit<PlaceConnection, 'name' | 'addedAt' | 'owner' | 'storeId' | 'root'>> {
    const url = checkServerUrl(server.url, this.deps.allowPrivateNetwork);
    // Refuse a private or local target now rather than at first use; every fetch is checked again anyway.
    await checkTarget(url, { allowPrivateNetwork: this.deps.allowPrivateNetwork, resolve: resolveWithSystem }).catch((error: unknown) => {
      if (!(error instanceof NetworkPolicyError && error.kind === 'resolve-failed')) throw error;
    });
    // Without an API key, the server itself says whether it wants a sign-in (most remote servers do).
    const auth: ConnectionAuth = server.header
      ? { kind: 'header', header: server.header.name, ...(server.header.prefix && { prefix: server.header.prefix }), secretName: server.header.secret }
      : (await this.deps.asksForSignIn(url.href))
        ? { kind: 'oauth' }
        : { kind: 'none' };
    return {
      catalogId: customId(url),
      displayName: server.name?.trim() || url.hostname,
      url: url.href,
      transport: server.transport ?? 'streamable-http',
      auth,
    };
  }

  private async requireSecret(place: Place, name: string): Promise<void> {
    if (!(await this.deps.placeSecrets.names(place.root)).includes(name)) {
      throw new ConnectionRequestError(`${place.label} has no secret named "${name}". Create it first (its value is the API key), then add the connection.`, 404);
    }
  }

  /** What the connections' states depend on beyond access: the place's secret names, which OAuth logins exist. */
  private async facts(place: Place, connections: readonly PlaceConnection[]): Promise<Facts> {
    // The keychain is asked only about what the connections use.
    const secrets = connections.some((c) => c.auth.kind === 'header') ? await this.cachedSecretNames(place) : [];
    const signedIn = new Set<string>();
    for (const c of connections) {
      if (c.auth.kind !== 'oauth') continue;
      const key = `${c.storeId}/${c.name}`;
      let state = this.signInStates.get(key);
      if (!state) this.signInStates.set(key, (state = await this.deps.oauth.state(c)));
      if (state === 'signed-in') signedIn.add(c.storeId + c.name);
    }
    return { secrets, signedIn };
  }

  private async cachedSecretNames(place: Place): Promise<string[]> {
    const cached = this.secretNamesCache.get(place.root);
    if (cached && Date.now() - cached.at < SECRET_NAMES_TTL_MS) return cached.names;
    const names = await this.deps.placeSecrets.names(place.root);
    this.secretNamesCache.set(place.root, { names, at: Date.now() });
    return names;
  }

  private view(dir: AccessDirectorySnapshot, person: string, place: Place, c: PlaceConnection, facts: Facts): ConnectionView {
    const { state, reason } = this.state(dir, place, c, facts);
    return {
      name: c.name,
      displayName: c.displayName,
      catalogId: c.catalogId,
      url: c.url,
      transport: c.transport,
      owner: c.owner,
      ownerName: nameOf(dir, c.owner),
      auth: c.auth.kind,
      ...(c.auth.kind === 'header' && { header: c.auth.header, secretName: c.auth.secretName }),
      state,
      ...(reason !== undefined && { reason }),
      mine: c.owner === person,
      canRemove: canRemoveConnection(dir, person, place, c.owner),
      addedAt: c.addedAt,
    };
  }

  private state(dir: AccessDirectorySnapshot, place: Place, c: PlaceConnection, facts: Facts): { state: ConnectionState; reason?: string } {
    const blocker = editBlocker(dir, c.owner, place);
    if (blocker) return { state: 'paused', reason: `Paused: ${blocker}. It works again once they can edit the place; or remove it.` };
    if (c.auth.kind === 'header' && !facts.secrets.includes(c.auth.secretName)) {
      return { state: 'needs-secret', reason: `The secret "${c.auth.secretName}" is missing from ${place.label}. Create it again, or remove this connection.` };
    }
    if (c.auth.kind === 'oauth' && !facts.signedIn.has(c.storeId + c.name)) {
      return { state: 'sign-in', reason: `Not signed in yet; only ${nameOf(dir, c.owner)}, who added it, can sign in.` };
    }
    return { state: 'connected' };
  }
}

function authFor(entry: CatalogEntry, secret: string | undefined): ConnectionAuth {
  if (entry.auth === 'oauth') return { kind: 'oauth' };
  if (entry.auth === 'api-key') {
    if (!secret) {
      throw new ConnectionRequestError(`${entry.name} needs an API key: create a secret in this place holding the key, and give its name as "secret".`);
    }
    return { kind: 'header', header: entry.apiKey!.header, ...(entry.apiKey!.prefix && { prefix: entry.apiKey!.prefix }), secretName: secret };
  }
  return { kind: 'none' };
}

/** A catalog-shaped id for a server that is not listed, from its host and port: mcp.example.com → custom-mcp-example-com. */
function customId(url: URL): string {
  const host = `${url.hostname}${url.port ? `-${url.port}` : ''}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return `custom-${host}`.slice(0, 32).replace(/-$/, '');
}

function requireRead(dir: AccessDirectorySnapshot, person: string, place: Place): void {
  if (!canRead(dir, person, place)) throw new PlaceAccessError(`${nameOf(dir, person)} cannot see ${place.label}. Ask one of its editors for access.`);
}

function requireEdit(dir: AccessDirectorySnapshot, person: string, place: Place, what: string): void {
  if (!canEdit(dir, person, place)) {
    throw new PlaceAccessError(`${nameOf(dir, person)} cannot ${what} ${place.label}: only people who can edit it can. Ask an editor to add you.`);
  }
}

function notFound(place: Place, name: string): ConnectionRequestError {
  return new ConnectionRequestError(`${place.label} has no connection named "${name}". List the place's connections to see their names.`, 404);
}

function nameOf(dir: AccessDirectorySnapshot, person: string): string {
  return dir.people[person]?.name ?? person;
}
