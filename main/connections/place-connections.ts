import { DEFAULT_JWT_ALGORITHM, type ClientCredentialsInput } from '../../common/api/client-credentials.js';
import type {
  AddConnection,
  ConnectionDetails,
  ConnectionEdit,
  ConnectionState,
  ConnectionView,
  LocalServerSpec,
  LocalView,
} from '../../common/api/connections.js';
import type { AccessDirectory, AccessDirectorySnapshot } from '../places/access-directory.js';
import { canRemoveConnection, editBlocker } from '../places/access-rules.js';
import type { Place } from '../places/place-root.js';
import type { ConnectionSecrets } from '../secrets/connection-secrets.js';
import type { PlaceSecrets } from '../secrets/place-secrets.js';
import type { RemoteCatalogEntry } from './catalog/catalog-schema.js';
import { installHosts } from './local/install-hosts.js';
import type { CatalogService } from './catalog/catalog-service.js';
import type { ConnectionHealth, Health } from './gateway/connection-health.js';
import type { Gateway } from './gateway/gateway.js';
import type {
  BegunSignIn,
  CallbackAnswer,
  ChainStep,
  ClientCredentials,
  ConnectionOAuth,
  LoginEnd,
  OwnApp,
  SignInGroup,
} from './upstream-oauth/connection-oauth.js';
import { signInReason } from './sign-in-reason.js';
import { NetworkPolicyError } from '../network/network-policy-error.js';
import { checkTarget, resolveWithSystem } from '../network/target-check.js';
import { ConnectionRequestError, nameOf, PlaceAccessError, requireEdit, requireRead } from './place-rules.js';
import { PlaceSecretsAccess } from './place-secrets-access.js';
import { checkServerUrl, customName } from './server-url.js';
import {
  isOAuth,
  type ConnectionAuth,
  type ConnectionPatch,
  type ConnectionStore,
  type LocalConnection,
  type OmitEach,
  type PlaceConnection,
} from './store/connection-store.js';
import { unlistedCatalogId } from './store/naming.js';
import { checkLocalCommand, commandLine, localId, programName } from './local/local-command.js';
import { waitAtMost } from './gateway/wait-at-most.js';
import { SignInOutcomes } from './sign-in-outcomes.js';
import { inertLine, MAX_TITLE } from './upstream-text.js';

export type { ConnectionDetails, ConnectionState, ConnectionView, LocalView };

interface Facts {
  secrets: string[];
  /** storeId + name of the OAuth connections with a login. */
  signedIn: Set<string>;
  /** By storeId + name: OAuth connections without a login because the provider ended it, and how. */
  ended: Map<string, LoginEnd>;
  /** By storeId + name: OAuth connections whose server wants wider access than their login has (or refuses it for good). */
  stepUps: Map<string, { problem: 'sign-in' | 'key-refused'; reason: string }>;
}

/** The connection's server did not answer as it must with the connection's credentials; nothing was changed. */
export class ConnectionCheckError extends Error {
  override readonly name = 'ConnectionCheckError';
  constructor(
    readonly displayName: string,
    readonly problem: string,
    reason: string,
  ) {
    super(reason);
  }
}

export interface PlaceConnectionsDeps {
  /** How long a server's answer is waited for, as a check in progress says. */
  answerWaitMs: number;
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
  health: ConnectionHealth;
  allowPrivateNetwork: boolean;
  /** The ports this app listens on: never a connection's target on this machine, whatever the setting. */
  appPorts: () => readonly number[];
}

/** How long a sign-in may take from its start to the browser's answer, as ConnectionOAuth allows by default. */
const SIGN_IN_TTL_MS = 10 * 60_000;

/** How long a list waits for the first check of connections never checked before it answers "checking". */
const FIRST_CHECK_WAIT_MS = 1_500;

/** How long an add that answers soon waits for its server (whether it asks for a sign-in, then its check) before it answers "checking". */
export const ANSWER_SOON_MS = 2_000;

/**
 * A place's MCP connections under the spec's rules: who adds (editors), who removes (the adder or
 * an editor), who sees (readers), checked on every request and, for use, on every call.
 */
/** How long a place's secret names are trusted: another process (the CLI) may change them. */
const SECRET_NAMES_TTL_MS = 3_000;

export class PlaceConnections {
  // Asked on every agent call (usable()), so kept here: the keychain is a D-Bus round trip.
  private readonly secretNamesCache = new Map<string, { names: string[]; at: number }>();
  // Counts the changes to place secrets that ended: names read while one was under way may be those
  // from before it, and are not kept.
  private secretChanges = 0;
  // This process is the only one that signs in and refreshes, and it hears every change.
  private readonly signInStates = new Map<string, { state: 'signed-in' | 'sign-in'; ended?: LoginEnd | undefined }>();
  private readonly signInOutcomes: SignInOutcomes;
  private readonly secrets: PlaceSecretsAccess;
  private readonly listeners = new Set<(root: string | undefined) => void>();

  constructor(private readonly deps: PlaceConnectionsDeps) {
    this.signInOutcomes = new SignInOutcomes(SIGN_IN_TTL_MS);
    this.secrets = new PlaceSecretsAccess(deps);
    deps.oauth.onStateChange((change) => {
      const key = `${change.storeId}/${change.serverName}`;
      this.signInStates.set(key, { state: change.state, ended: change.ended });
      if (change.state === 'signed-in') this.signInOutcomes.forget(key);
      // A new login (or none any more): what the server answers with it is measured again.
      deps.health.recheck({ storeId: change.storeId, name: change.serverName });
      this.changed(undefined);
    });
    deps.health.onState((c) => this.changed(c.root));
  }

  /**
   * Hears when what a place's connections show may have changed beyond their records (a check
   * started or ended, a sign-in began, ended or failed, a secret changed): the place's root, or
   * undefined for any place.
   */
  onChange(listener: (root: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Another process changed place secrets: the names are read again, and what the connections show may change. */
  secretsChanged(): void {
    this.secretChanges += 1;
    this.secretNamesCache.clear();
    this.changed(undefined);
  }

  private changed(root: string | undefined): void {
    for (const listener of this.listeners) listener(root);
  }

  /**
   * The place's connections with their measured states. Connections never checked are checked
   * now; the answer waits for those checks up to `waitMs` (the CLI waits for all of them), and
   * says "checking" for the ones still running.
   */
  async list(person: string, place: Place, options: { waitMs?: number } = {}): Promise<ConnectionView[]> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connections = await this.deps.store.list(place.root);
    const facts = await this.facts(place, connections);
    const first = connections
      .filter((c) => !this.gate(dir, place, c, facts) && !this.deps.health.health(c).last)
      .map((c) => this.deps.health.check(c));
    if (first.length) await waitAtMost(Promise.all(first), options.waitMs ?? FIRST_CHECK_WAIT_MS);
    return connections.map((c) => this.view(dir, person, place, c, facts));
  }

  /**
   * Adds a connection and checks its server at once with its credentials: the answer says what the
   * server said (a refused key, an unreachable host), so a failed add never looks fine. With
   * `waitMs`, a server that has not answered by then is shown "checking": the check goes on, and
   * its outcome reaches every surface as it comes (onChange).
   */
  async add(person: string, place: Place, request: AddConnection, options: { waitMs?: number } = {}): Promise<ConnectionView> {
    const deadline = options.waitMs === undefined ? undefined : Date.now() + options.waitMs;
    const dir = await this.deps.access.snapshot();
    requireEdit(dir, person, place, 'add connections to');
    const fields =
      'catalog' in request
        ? await this.fromCatalog(request)
        : 'local' in request
          ? fromLocal(request.local)
          : await this.fromServer(person, place, request.server, deadline);
    if (fields.auth.kind === 'header') await this.requireSecret(place, fields.auth.secretName);
    if (fields.transport === 'stdio') for (const { secret } of fields.local.env) await this.requireSecret(place, secret);
    const added = await this.deps.store.add({ owner: person, root: place.root, ...fields });
    const facts = await this.facts(place, [added]);
    if (!this.gate(dir, place, added, facts)) {
      const check = this.deps.health.check(added);
      await (deadline === undefined ? check : waitAtMost(check, Math.max(0, deadline - Date.now())));
    }
    return this.view(dir, person, place, added, facts);
  }

  /**
   * Changes a connection without removing it. Its URL, transport and credentials: only the person
   * whose login it uses (a new URL drops an OAuth login, which must not reach another server).
   * Which tools are on: also an editor of the place. The server is checked again at once.
   */
  async edit(person: string, place: Place, name: string, request: ConnectionEdit, owner?: string): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    const changesLogin =
      request.url !== undefined ||
      request.transport !== undefined ||
      request.header !== undefined ||
      request.name !== undefined ||
      request.own_app !== undefined ||
      request.client_credentials !== undefined ||
      request.local !== undefined;
    if (changesLogin && connection.owner !== person) {
      throw new PlaceAccessError(
        `${connection.displayName} in ${place.label} uses ${nameOf(dir, connection.owner)}'s login; only they can change its server or credentials.`,
      );
    }
    if (request.tools && !canRemoveConnection(dir, person, place, connection.owner)) {
      throw new PlaceAccessError(
        `${nameOf(dir, person)} cannot turn tools of ${connection.displayName} on or off: only the person who added it or an editor of ${place.label} can.`,
      );
    }
    const remoteOnly =
      request.url !== undefined ||
      request.transport !== undefined ||
      request.header !== undefined ||
      request.own_app !== undefined ||
      request.client_credentials !== undefined;
    if (connection.transport === 'stdio' && remoteOnly) {
      throw new ConnectionRequestError(
        `${connection.displayName} is a local server: it has no URL, transport, header or OAuth app. Change its command, variables or hosts instead.`,
      );
    }
    if (connection.transport !== 'stdio' && request.local !== undefined) {
      throw new ConnectionRequestError(
        `${connection.displayName} is a remote server: it has no command. Remove it and add the local server instead.`,
      );
    }
    const patch: ConnectionPatch = {};
    if (request.local !== undefined) {
      patch.local = checkLocalCommand(request.local);
      for (const { secret } of patch.local.env) await this.requireSecret(place, secret);
    }
    if (request.name !== undefined) {
      const displayName = inertLine(request.name, MAX_TITLE);
      if (!displayName) throw new ConnectionRequestError('A connection needs a name; give one, or leave the name out to keep it.');
      patch.displayName = displayName;
    }
    if (request.url !== undefined) patch.url = (await this.checkedUrl(request.url)).href;
    if (request.transport !== undefined) patch.transport = request.transport;
    if (request.header !== undefined) {
      if (connection.auth.kind === 'oauth')
        throw new ConnectionRequestError(
          `${connection.displayName} signs in with OAuth; it takes no API-key header. Remove it and add the server again to use a key.`,
        );
      if (request.header) await this.requireSecret(place, request.header.secret);
      patch.auth = request.header
        ? {
            kind: 'header',
            header: request.header.name,
            ...(request.header.prefix && { prefix: request.header.prefix }),
            secretName: request.header.secret,
          }
        : { kind: 'none' };
    }
    if (request.own_app !== undefined) {
      if (connection.auth.kind !== 'oauth')
        throw new ConnectionRequestError(
          `${connection.displayName} does not sign in with OAuth, so it takes no OAuth app. Use an API-key header instead.`,
        );
      const clientId = request.own_app?.client_id.trim();
      if (request.own_app && !clientId)
        throw new ConnectionRequestError('An own OAuth app needs its client ID; give one, or null to sign in without your own app.');
      patch.auth = clientId ? { kind: 'oauth', ownApp: { clientId } } : { kind: 'oauth' };
    }
    if (request.client_credentials !== undefined) {
      if (connection.auth.kind !== 'oauth')
        throw new ConnectionRequestError(
          `${connection.displayName} does not sign in with OAuth, so it takes no client credentials. Use an API-key header instead.`,
        );
      if (request.client_credentials && request.own_app)
        throw new ConnectionRequestError(
          'A connection logs in either with client credentials or in the browser with your own OAuth app, not both.',
        );
    }
    const credentials = request.client_credentials && (await checkedCredentials(request.client_credentials));
    if (credentials)
      patch.auth = {
        kind: 'oauth',
        clientCredentials: { clientId: credentials.clientId, method: 'clientSecret' in credentials ? 'client_secret' : 'private_key_jwt' },
      };
    // Back to the browser: with the own OAuth app given alongside, else by registration.
    else if (request.client_credentials === null && request.own_app === undefined) patch.auth = { kind: 'oauth' };
    if (request.tools) {
      const off = new Set(connection.disabledTools ?? []);
      for (const [tool, enabled] of Object.entries(request.tools)) {
        if (enabled) off.delete(tool);
        else off.add(tool);
      }
      patch.disabledTools = [...off].sort();
    }
    const movedLogin = isOAuth(connection) && patch.url !== undefined && patch.url !== connection.url;
    // The login (and the own app's secret with it) goes with the server it was made for; a new URL keeps no own app.
    if (movedLogin && request.own_app === undefined && request.client_credentials === undefined) patch.auth = { kind: 'oauth' };
    // Machine credentials log in now, before anything changes: ones the provider refuses are not kept.
    const login =
      credentials &&
      isOAuth(connection) &&
      (await this.deps.oauth.tryClientCredentials(
        { url: patch.url ?? connection.url, displayName: patch.displayName ?? connection.displayName },
        credentials,
      ));
    const edited = await this.deps.store.update({ root: place.root, name: connection.name, owner: connection.owner }, patch);
    // A login made with another OAuth app (or for another server) ends; the next sign-in uses the new one.
    if (isOAuth(connection) && (movedLogin || request.own_app !== undefined || request.client_credentials !== undefined))
      await this.deps.oauth.revokeAndForget(connection);
    if (login && isOAuth(edited)) await this.deps.oauth.keepCredentialsLogin(edited, login);
    if (request.own_app?.client_secret)
      await this.deps.connectionSecrets.set(identityOf(edited), OWN_APP_SECRET, request.own_app.client_secret);
    const facts = await this.facts(place, [edited]);
    if (!this.gate(dir, place, edited, facts) && (changesLogin || !this.deps.health.health(edited).last))
      await this.deps.health.check(edited);
    return this.view(dir, person, place, edited, facts);
  }

  /** A connection's details: its view, the tools its server listed at the last check (each on or off), and its last errors. */
  async details(person: string, place: Place, name: string, owner?: string): Promise<ConnectionDetails> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    const facts = await this.facts(place, [connection]);
    if (!this.gate(dir, place, connection, facts) && !this.deps.health.health(connection).last) await this.deps.health.check(connection);
    const health = this.deps.health.health(connection);
    const off = new Set(connection.disabledTools ?? []);
    const listed = health.last?.kind === 'ok' ? health.last.tools : [];
    return {
      ...this.view(dir, person, place, connection, facts),
      toolList: listed.map((t) => ({
        name: t.name,
        ...(t.description !== undefined && { description: t.description }),
        enabled: !off.has(t.name),
      })),
      errors: health.errors.map((e) => ({ at: new Date(e.at).toISOString(), message: e.message })),
    };
  }

  /** Checks a connection's server now (Test): initialize and tools/list with its credentials. */
  async test(person: string, place: Place, name: string, owner?: string): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    const facts = await this.facts(place, [connection]);
    const blocked = this.gate(dir, place, connection, facts);
    if (blocked) return this.view(dir, person, place, connection, facts);
    await this.deps.health.checkAgain(connection);
    return this.view(dir, person, place, connection, facts);
  }

  /**
   * Cancels the check of a connection's server running now (Cancel, for a server that does not
   * answer): its requests end, and it shows "cancelled" until it is checked again (Retry).
   */
  async cancelCheck(person: string, place: Place, name: string, owner?: string): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    await this.deps.health.cancel(connection);
    return this.view(dir, person, place, connection, await this.facts(place, [connection]));
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
    if (isOAuth(connection) && connection.auth.clientCredentials)
      return { connection: view, tools: await this.logInWithCredentials(connection) };
    if (isOAuth(connection)) return this.signIn(connection, view, options);
    try {
      return { connection: view, tools: await this.checkedToolNames(connection) };
    } catch (error) {
      // A server added as open that now asks for an OAuth login (401 with a Bearer challenge): from now on it is signed in to.
      if (!(
        error instanceof ConnectionCheckError &&
        error.problem === 'sign-in' &&
        connection.transport !== 'stdio' &&
        connection.auth.kind === 'none'
      ))
        throw error;
      // Its health starts afresh with the new record: the challenge that asked for the sign-in is taken along.
      const challenge = this.lastChallenge(connection);
      const switched = await this.deps.store.update(
        { root: place.root, name: connection.name, owner: connection.owner },
        { auth: { kind: 'oauth' } },
      );
      if (!isOAuth(switched)) throw error;
      return this.signIn(switched, { ...view, auth: 'oauth', state: 'sign-in' }, options, challenge);
    }
  }

  private async signIn(
    connection: PlaceConnection & Parameters<ConnectionOAuth['begin']>[0],
    view: ConnectionView,
    options: { ownApp?: OwnApp; openBrowser?: boolean },
    challenge = this.lastChallenge(connection),
  ): Promise<{ connection: ConnectionView; authorizationUrl: string }> {
    const { authorizationUrl } = await this.beginSignIn(connection, options.ownApp, challenge);
    if (options.openBrowser ?? true) this.deps.openBrowser(authorizationUrl);
    const ownApp = options.ownApp ? { ownApp: { clientId: options.ownApp.clientId } } : {};
    return { connection: { ...view, ...ownApp, signIn: { state: 'pending', since: new Date().toISOString() } }, authorizationUrl };
  }

  /** The server's last 401 challenge to a request of the connection: the sign-in asks for what it names. */
  private lastChallenge(connection: PlaceConnection): { challenge?: string } {
    const last = this.deps.health.health(connection).last;
    return last?.kind === 'failed' && last.challenge ? { challenge: last.challenge } : {};
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
    const signIns: (BegunSignIn & { name: string; displayName: string })[] = [];
    // Those of one authorization server sign in with one registration, and one consent (ConnectionOAuth.chain).
    const group: SignInGroup = new Map();
    for (const { connection } of targets) {
      if (isOAuth(connection) && connection.auth.clientCredentials) {
        await this.logInWithCredentials(connection);
      } else if (isOAuth(connection)) {
        const begun = await this.beginSignIn(connection, options.ownApp, this.lastChallenge(connection), group);
        signIns.push({ name: connection.name, displayName: connection.displayName, ...begun });
      } else {
        await this.checkedToolNames(connection);
      }
    }
    const chained = signIns.length ? this.deps.oauth.chain(signIns) : [];
    const authorizationUrl = chained[0];
    if (authorizationUrl && (options.openBrowser ?? true)) this.deps.openBrowser(authorizationUrl);
    return {
      connections: targets.map((t) => t.view),
      // Each one's own link too: opened alone (the chain's window was closed), it goes on through the rest.
      signIns: signIns.map(({ name }, index) => ({ name, authorizationUrl: chained[index]! })),
      ...(authorizationUrl && { authorizationUrl }),
    };
  }

  /**
   * Begins a connection's sign-in with the own OAuth app given (kept for the next sign-ins), else
   * the one it keeps, else by registration.
   */
  private async beginSignIn(
    connection: PlaceConnection & Parameters<ConnectionOAuth['begin']>[0],
    given: OwnApp | undefined,
    challenge: { challenge?: string },
    group?: SignInGroup,
  ): Promise<BegunSignIn> {
    const kept = connection.auth.kind === 'oauth' ? connection.auth.ownApp : undefined;
    const ownApp = given ?? (kept && (await this.keptOwnApp(connection, kept.clientId)));
    const begun = await this.deps.oauth.begin(connection, { ...(ownApp && { ownApp }), ...challenge, ...(group && { group }) });
    if (given) {
      const id = { root: connection.root, name: connection.name, owner: connection.owner };
      await this.deps.store.update(id, { auth: { kind: 'oauth', ownApp: { clientId: given.clientId } } });
      if (given.clientSecret) await this.deps.connectionSecrets.set(identityOf(connection), OWN_APP_SECRET, given.clientSecret);
    }
    this.signInOutcomes.begun(keyOf(connection), begun.authorizationUrl);
    this.changed(connection.root);
    return begun;
  }

  /** Logs in with the connection's machine credentials now, then checks its server with that login. */
  private async logInWithCredentials(
    connection: PlaceConnection & Parameters<ConnectionOAuth['logInWithCredentials']>[0],
  ): Promise<string[]> {
    // No browser: a refusal comes back to the caller of Connect at once.
    await this.deps.oauth.logInWithCredentials(connection);
    return this.checkedToolNames(connection);
  }

  private async keptOwnApp(connection: PlaceConnection, clientId: string): Promise<OwnApp> {
    const clientSecret = await this.deps.connectionSecrets.get(identityOf(connection), OWN_APP_SECRET);
    return { clientId, ...(clientSecret && { clientSecret }) };
  }

  /** The caller's own connections of these names, each ready to connect, or an error that says why not. */
  private async ownConnections(
    person: string,
    place: Place,
    names: string[],
  ): Promise<{ connection: PlaceConnection; view: ConnectionView }[]> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connections = await this.deps.store.list(place.root);
    const found = names.map((name) => {
      const connection = connections.find((c) => c.name === name && c.owner === person) ?? connections.find((c) => c.name === name);
      if (!connection) throw notFound(place, name);
      if (connection.owner !== person) {
        throw new PlaceAccessError(
          `${connection.displayName} in ${place.label} uses ${nameOf(dir, connection.owner)}'s login; only they can sign in to it.`,
        );
      }
      return connection;
    });
    const facts = await this.facts(place, found);
    return found.map((connection) => {
      const view = this.view(dir, person, place, connection, facts);
      const blocked = this.gate(dir, place, connection, facts);
      if (connection.auth.kind === 'oauth' && blocked?.state === 'paused')
        throw new ConnectionRequestError(`${connection.displayName} cannot sign in: ${blocked.reason}`, 409);
      if (connection.auth.kind !== 'oauth' && blocked)
        throw new ConnectionRequestError(`${connection.displayName} cannot connect: ${blocked.reason}`, 409);
      return { connection, view };
    });
  }

  /** Checks the server with the connection's credentials; its tool names, or an error that says what it answered. */
  private async checkedToolNames(connection: PlaceConnection): Promise<string[]> {
    const measured = await this.deps.health.check(connection);
    if (measured.kind === 'failed') throw new ConnectionCheckError(connection.displayName, measured.problem, measured.reason);
    if (measured.kind === 'cancelled') throw new ConnectionCheckError(connection.displayName, 'cancelled', measured.reason);
    return measured.tools.map((t) => t.name);
  }

  /** Finishes a sign-in that the browser brought back to /oauth/callback. */
  async finishSignIn(answer: CallbackAnswer): Promise<{ displayName: string }> {
    return this.deps.oauth.finish(answer);
  }

  /** After a sign-in ended, well or not: in a chain, where the browser goes next, or every outcome at its end. */
  continueSignIns(state: string | undefined, outcome: { ok: boolean; message?: string }): ChainStep | undefined {
    this.signInOutcomes.ended(state, outcome);
    this.changed(undefined);
    return this.deps.oauth.advanceChain(state, outcome);
  }

  /** Removes a connection and deletes its login. `owner` picks whose, when several people added the same server. */
  async remove(person: string, place: Place, name: string, owner?: string): Promise<ConnectionView> {
    const dir = await this.deps.access.snapshot();
    requireRead(dir, person, place);
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === name && (owner === undefined || c.owner === owner));
    if (!connection) throw notFound(place, name);
    if (!canRemoveConnection(dir, person, place, connection.owner)) {
      throw new PlaceAccessError(
        `${nameOf(dir, person)} cannot remove ${connection.displayName} from ${place.label}: only the person who added it or an editor of the place can.`,
      );
    }
    const removed = await this.deps.store.remove({ root: place.root, name, owner: connection.owner });
    this.deps.health.forget(removed);
    this.signInOutcomes.forget(keyOf(removed));
    await this.deps.gateway.drop(removed);
    // Removing it deletes that login: revoked at the provider where it can be, then gone from the keychain.
    const revocation = isOAuth(removed) ? await this.deps.oauth.revokeAndForget(removed) : undefined;
    if (!revocation) await this.deps.connectionSecrets.deleteAll({ storeId: removed.storeId, serverName: removed.name });
    const view = this.view(dir, person, place, removed, { secrets: [], signedIn: new Set(), ended: new Map(), stepUps: new Map() });
    return revocation?.problems.length
      ? { ...view, reason: `Removed, but revoking the login failed: ${revocation.problems.join(' ')}` }
      : view;
  }

  /** The names of the place's secrets (never their values), for anyone who can see the place. */
  async secretNames(person: string, place: Place): Promise<string[]> {
    return this.keepNames(place, () => this.secrets.names(person, place));
  }

  /** Saves a place secret (see PlaceSecretsAccess.set); the connections that send it are measured again with its new value. */
  async setSecret(person: string, place: Place, name: string, value: string, options: { replace: boolean }): Promise<void> {
    const changed = await this.changingSecrets(place, () => this.secrets.set(person, place, name, value, options));
    for (const c of changed) void this.deps.health.checkAgain(c);
    this.changed(place.root);
  }

  async removeSecret(person: string, place: Place, name: string): Promise<void> {
    await this.changingSecrets(place, () => this.secrets.remove(person, place, name));
    this.changed(place.root);
  }

  /** Runs a change to the place's secrets; when it ends, the names cached before it or while it ran are dropped. */
  private async changingSecrets<T>(place: Place, change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } finally {
      this.secretChanges += 1;
      this.secretNamesCache.delete(place.root);
    }
  }

  /** Reads the place's secret names and caches them, unless a change to secrets ended meanwhile. */
  private async keepNames(place: Place, read: () => Promise<string[]>): Promise<string[]> {
    const changes = this.secretChanges;
    const names = await read();
    if (changes === this.secretChanges) this.secretNamesCache.set(place.root, { names, at: Date.now() });
    return names;
  }

  /**
   * The connections agents in the place may use (adder still allowed, credentials present); whether
   * their servers answer is their health.
   */
  async usable(place: Place): Promise<PlaceConnection[]> {
    const dir = await this.deps.access.snapshot();
    const connections = await this.deps.store.list(place.root);
    const facts = await this.facts(place, connections);
    return connections.filter((c) => !this.gate(dir, place, c, facts));
  }

  /** The state of the place's connection named `serverName`, for an agent told why its tool is not there. */
  async stateOf(
    place: Place,
    serverName: string,
  ): Promise<{ displayName: string; state: ConnectionState; reason?: string; disabledTools?: string[] } | undefined> {
    const dir = await this.deps.access.snapshot();
    const connection = (await this.deps.store.list(place.root)).find((c) => c.name === serverName);
    if (!connection) return undefined;
    const { state, reason } = this.state(dir, place, connection, await this.facts(place, [connection]));
    return {
      displayName: connection.displayName,
      state,
      ...(reason !== undefined && { reason }),
      ...(connection.disabledTools && { disabledTools: connection.disabledTools }),
    };
  }

  private async fromCatalog(request: Extract<AddConnection, { catalog: string }>): Promise<NewConnection> {
    const entry = this.deps.catalog.list().entries.find((e) => e.id === request.catalog);
    if (!entry)
      throw new ConnectionRequestError(
        `There is no connector "${request.catalog}" in the catalog. Search the catalog for its id, or add it as a server that is not listed.`,
        404,
      );
    if (entry.transport !== 'stdio')
      return {
        catalogId: entry.id,
        displayName: entry.name,
        url: entry.url,
        transport: entry.transport,
        auth: authFor(entry, request.secret),
      };
    // Only what the entry declares: its own command and arguments, and a place secret for each of its variables.
    const env = request.env ?? {};
    const unknown = Object.keys(env).find((name) => !entry.local.env.some((v) => v.name === name));
    if (unknown)
      throw new ConnectionRequestError(
        `${entry.name} reads no variable ${unknown}; it reads ${entry.local.env.map((v) => v.name).join(', ') || 'none'}.`,
      );
    const missing = entry.local.env.find((v) => v.required && !env[v.name]);
    if (missing)
      throw new ConnectionRequestError(
        `${entry.name} needs the variable ${missing.name}${missing.description ? ` (${missing.description})` : ''}: name the place secret that holds its value, as env {"${missing.name}": "SECRET"}.`,
      );
    const hosts = entry.local.hosts ?? (await installHosts(entry.local.command));
    const local = checkLocalCommand({ command: entry.local.command, args: entry.local.args, env, hosts });
    return { catalogId: entry.id, displayName: entry.name, transport: 'stdio', local, auth: { kind: 'none' } };
  }

  private async fromServer(
    person: string,
    place: Place,
    server: Extract<AddConnection, { server: unknown }>['server'],
    deadline: number | undefined,
  ): Promise<NewConnection> {
    const url = await this.checkedUrl(server.url);
    // Shown on every surface and to agents: one inert line, like a server's own names.
    const displayName = inertLine(server.name ?? '', MAX_TITLE) || customName(url);
    // Its tools read as the name given; never a catalog entry's id (the page would take it for that entry) nor another of the person's here.
    const taken = new Set([
      ...this.deps.catalog.list().entries.map((e) => e.id),
      ...(await this.deps.store.list(place.root)).filter((c) => c.owner === person).map((c) => c.catalogId),
    ]);
    // Without an API key, the server itself says whether it wants a sign-in (most remote servers do). One
    // that does not say by the deadline is taken as open: its check then finds a sign-in it asks for.
    const auth: ConnectionAuth = server.header
      ? {
          kind: 'header',
          header: server.header.name,
          ...(server.header.prefix && { prefix: server.header.prefix }),
          secretName: server.header.secret,
        }
      : (await (deadline === undefined ? this.deps.asksForSignIn(url.href) : answerBy(this.deps.asksForSignIn(url.href), deadline, false)))
        ? { kind: 'oauth' }
        : { kind: 'none' };
    return {
      catalogId: unlistedCatalogId(displayName, taken),
      displayName,
      url: url.href,
      transport: server.transport ?? 'streamable-http',
      auth,
    };
  }

  /** A server URL of the right form, whose target is not refused (a private or local one is refused now rather than at first use). */
  private async checkedUrl(text: string): Promise<URL> {
    const url = checkServerUrl(text, this.deps.allowPrivateNetwork);
    await checkTarget(url, {
      allowPrivateNetwork: this.deps.allowPrivateNetwork,
      appPorts: this.deps.appPorts,
      resolve: resolveWithSystem,
    }).catch((error: unknown) => {
      if (!(error instanceof NetworkPolicyError && error.kind === 'resolve-failed')) throw error;
    });
    return url;
  }

  private async requireSecret(place: Place, name: string): Promise<void> {
    if (!(await this.deps.placeSecrets.names(place.root)).includes(name)) {
      throw new ConnectionRequestError(
        `${place.label} has no secret named "${name}". Create it first (its value is the API key), then add the connection.`,
        404,
      );
    }
  }

  /** What the connections' states depend on beyond access: the place's secret names, which OAuth logins exist. */
  private async facts(place: Place, connections: readonly PlaceConnection[]): Promise<Facts> {
    // The keychain is asked only about what the connections use.
    const secrets = connections.some((c) => c.auth.kind === 'header' || (c.transport === 'stdio' && c.local.env.length > 0))
      ? await this.cachedSecretNames(place)
      : [];
    const signedIn = new Set<string>();
    const ended: Facts['ended'] = new Map();
    const stepUps: Facts['stepUps'] = new Map();
    for (const c of connections) {
      if (!isOAuth(c)) continue;
      const key = `${c.storeId}/${c.name}`;
      let known = this.signInStates.get(key);
      if (!known) {
        const state = await this.deps.oauth.state(c);
        this.signInStates.set(key, (known = { state, ended: state === 'sign-in' ? await this.deps.oauth.loginEnded(c) : undefined }));
      }
      if (known.state !== 'signed-in') {
        if (known.ended) ended.set(c.storeId + c.name, known.ended);
        continue;
      }
      signedIn.add(c.storeId + c.name);
      const stepUp = await this.deps.oauth.stepUp(c);
      if (stepUp) stepUps.set(c.storeId + c.name, stepUp);
    }
    return { secrets, signedIn, ended, stepUps };
  }

  private async cachedSecretNames(place: Place): Promise<string[]> {
    const cached = this.secretNamesCache.get(place.root);
    if (cached && Date.now() - cached.at < SECRET_NAMES_TTL_MS) return cached.names;
    return this.keepNames(place, () => this.deps.placeSecrets.names(place.root));
  }

  private view(dir: AccessDirectorySnapshot, person: string, place: Place, c: PlaceConnection, facts: Facts): ConnectionView {
    const { state, reason, health, signIn } = this.state(dir, place, c, facts, person);
    const last = health?.last;
    return {
      name: c.name,
      displayName: c.displayName,
      catalogId: c.catalogId,
      ...(c.transport === 'stdio' ? { local: this.localView(c) } : { url: c.url }),
      transport: c.transport,
      owner: c.owner,
      ownerName: nameOf(dir, c.owner),
      auth: c.auth.kind,
      ...(c.auth.kind === 'oauth' && c.auth.ownApp && { ownApp: { clientId: c.auth.ownApp.clientId } }),
      ...(c.auth.kind === 'oauth' && c.auth.clientCredentials && { clientCredentials: { ...c.auth.clientCredentials } }),
      ...(c.auth.kind === 'header' && {
        header: c.auth.header,
        ...(c.auth.prefix && { prefix: c.auth.prefix }),
        secretName: c.auth.secretName,
      }),
      state,
      ...(reason !== undefined && { reason }),
      ...(state === 'connected' && last?.kind === 'ok' && { tools: last.tools.length }),
      ...(c.disabledTools?.length && { disabledTools: c.disabledTools }),
      ...(last && { checkedAt: new Date(last.checkedAt).toISOString() }),
      ...(state === 'checking' && health?.checkingSince !== undefined && { checkingSince: new Date(health.checkingSince).toISOString() }),
      ...(state !== 'checking' && last?.kind === 'failed' && { nextCheckAt: new Date(last.nextCheckAt).toISOString() }),
      ...(signIn && { signIn }),
      mine: c.owner === person,
      canRemove: canRemoveConnection(dir, person, place, c.owner),
      addedAt: c.addedAt,
    };
  }

  private localView(c: LocalConnection): LocalView {
    const process = this.deps.gateway.localStatus(c);
    return {
      command: c.local.command,
      args: c.local.args,
      commandLine: commandLine(c.local),
      env: c.local.env.map((e) => ({ ...e })),
      hosts: c.local.hosts ?? [],
      ...(process && { process }),
    };
  }

  /** Its state and reason, with how its last sign-in went while it waits for one. */
  private state(
    dir: AccessDirectorySnapshot,
    place: Place,
    c: PlaceConnection,
    facts: Facts,
    viewer?: string,
  ): { state: ConnectionState; reason?: string; health?: Health; signIn?: ConnectionView['signIn'] } {
    const known = this.knownState(dir, place, c, facts, viewer);
    if (known.state !== 'sign-in') return known;
    // How the last sign-in started here went, so no surface waits on one that has ended.
    const outcome = this.signInOutcomes.of(keyOf(c));
    if (outcome?.state === 'failed')
      return {
        ...known,
        reason: `The last sign-in failed: ${outcome.reason}`,
        signIn: { state: 'failed', reason: outcome.reason, at: new Date(outcome.at).toISOString() },
      };
    if (outcome?.state === 'pending') return { ...known, signIn: { state: 'pending', since: new Date(outcome.since).toISOString() } };
    return known;
  }

  /** The state known without asking the server (paused, needs-secret, no login), or its measured health. */
  private knownState(
    dir: AccessDirectorySnapshot,
    place: Place,
    c: PlaceConnection,
    facts: Facts,
    viewer?: string,
  ): { state: ConnectionState; reason?: string; health?: Health } {
    const blocked = this.gate(dir, place, c, facts, viewer);
    if (blocked) return blocked;
    const health = this.deps.health.health(c);
    // Never checked: whoever asked for this view (list, add, Test, an agent's tools) starts the check.
    if (health.checking || !health.last) {
      return {
        state: 'checking',
        reason: `Asking the server for its tools now; it waits up to ${Math.round(this.deps.answerWaitMs / 1000)} s for each answer.`,
        health,
      };
    }
    if (health.last.kind === 'ok') return { state: 'connected', health };
    if (health.last.kind === 'cancelled') return { state: 'cancelled', reason: health.last.reason, health };
    return { state: health.last.problem, reason: health.last.reason, health };
  }

  /** Why a connection cannot be used whatever its server would answer, if it cannot. */
  /** `viewer`: who the reason is for (its owner is told what to do rather than who can do it); by default anyone. */
  private gate(
    dir: AccessDirectorySnapshot,
    place: Place,
    c: PlaceConnection,
    facts: Facts,
    viewer?: string,
  ): { state: ConnectionState; reason: string } | undefined {
    const blocker = editBlocker(dir, c.owner, place);
    if (blocker) return { state: 'paused', reason: `Paused: ${blocker}. It works again once they can edit the place; or remove it.` };
    if (c.auth.kind === 'header' && !facts.secrets.includes(c.auth.secretName)) {
      return {
        state: 'needs-secret',
        reason: `The secret "${c.auth.secretName}" is missing from ${place.label}. Create it again, or remove this connection.`,
      };
    }
    const missing = c.transport === 'stdio' ? c.local.env.find((e) => !facts.secrets.includes(e.secret)) : undefined;
    if (missing) {
      return {
        state: 'needs-secret',
        reason: `The secret "${missing.secret}" (its variable ${missing.name}) is missing from ${place.label}. Create it again, or change the server's variables.`,
      };
    }
    if (c.auth.kind === 'oauth' && !facts.signedIn.has(c.storeId + c.name)) {
      return {
        state: 'sign-in',
        reason: signInReason(facts.ended.get(c.storeId + c.name), viewer === c.owner ? undefined : nameOf(dir, c.owner)),
      };
    }
    // Its server wants wider access than the login has: the owner must approve it (or cannot).
    const stepUp = facts.stepUps.get(c.storeId + c.name);
    if (stepUp) return { state: stepUp.problem, reason: stepUp.reason };
    return undefined;
  }
}

/** A connection's fields as the add route makes them (the store names it and stamps it). */
type NewConnection = OmitEach<PlaceConnection, 'name' | 'addedAt' | 'owner' | 'storeId' | 'root'>;

/** A local server as a person gave it: checked; its id from the name given, else the program it runs. */
function fromLocal(request: LocalServerSpec): NewConnection {
  const local = checkLocalCommand(request);
  return {
    catalogId: localId(local, request.name),
    displayName: request.name?.trim() || programName(local),
    transport: 'stdio',
    local,
    auth: { kind: 'none' },
  };
}

/** The keychain item of a connection that holds its own OAuth app's client secret. */
const OWN_APP_SECRET = 'own-app-secret';

function identityOf(c: PlaceConnection): { storeId: string; serverName: string } {
  return { storeId: c.storeId, serverName: c.name };
}

function keyOf(c: PlaceConnection): string {
  return `${c.storeId}/${c.name}`;
}

function authFor(entry: RemoteCatalogEntry, secret: string | undefined): ConnectionAuth {
  if (entry.auth === 'oauth') return { kind: 'oauth' };
  if (entry.auth === 'api-key') {
    if (!secret) {
      throw new ConnectionRequestError(
        `${entry.name} needs an API key: create a secret in this place holding the key, and give its name as "secret".`,
      );
    }
    return {
      kind: 'header',
      header: entry.apiKey!.header,
      ...(entry.apiKey!.prefix && { prefix: entry.apiKey!.prefix }),
      secretName: secret,
    };
  }
  return { kind: 'none' };
}

/** What `work` gives by `deadline`, else `fallback` (the work goes on, unheard). */
async function answerBy<T>(work: Promise<T>, deadline: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

function notFound(place: Place, name: string): ConnectionRequestError {
  return new ConnectionRequestError(
    `${place.label} has no connection named "${name}". List the place's connections to see their names.`,
    404,
  );
}

/** Machine credentials as given, trimmed, each part present: what the client-credentials login needs. */
async function checkedCredentials(given: ClientCredentialsInput): Promise<ClientCredentials> {
  const clientId = given.client_id.trim();
  if (!clientId)
    throw new ConnectionRequestError('Client credentials need the client ID; give one, or null to sign in in the browser again.');
  if ('client_secret' in given) {
    if (!given.client_secret) throw new ConnectionRequestError('Client credentials need the client secret (or a private key instead).');
    return { clientId, clientSecret: given.client_secret };
  }
  const credentials = { clientId, privateKey: given.private_key, algorithm: given.signing_algorithm ?? DEFAULT_JWT_ALGORITHM };
  // Read now, so a key that cannot sign changes nothing (and its text is never quoted back).
  const { importPKCS8 } = await import('jose');
  const usable = await importPKCS8(credentials.privateKey, credentials.algorithm).then(
    () => true,
    () => false,
  );
  if (!usable) {
    throw new ConnectionRequestError(
      `The private key is not a PKCS #8 PEM key for ${credentials.algorithm} ("-----BEGIN PRIVATE KEY-----"). Check the algorithm, or convert the key with: openssl pkcs8 -topk8 -nocrypt -in key.pem`,
    );
  }
  return credentials;
}
