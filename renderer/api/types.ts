// The API's answers as the page uses them (main/http/api-routes.ts is the source of truth).

import type { ClientCredentialsInput, ClientCredentialsView } from '../../common/api/client-credentials.js';
import type { CredentialStoreState, LimitName, LimitsInEffect } from '../../common/api/place-policy.js';

export type PlaceKind = 'machine' | 'workflow' | 'crew' | 'work' | 'code';

export interface Place {
  root: string;
  kind: PlaceKind;
  owner?: string;
  label: string;
  canEdit: boolean;
}

/** Measured by asking the server (connected, checking, sign-in, key-refused, unreachable, not-mcp, too-large) or known without asking. */
export type ConnectionState = 'connected' | 'checking' | 'sign-in' | 'key-refused' | 'unreachable' | 'not-mcp' | 'too-large' | 'paused' | 'needs-secret';

/** A local server's process as the running server knows it. */
export interface LocalProcess {
  state: 'running' | 'starting' | 'stopped';
  pid?: number;
  since?: string;
  stopped?: string;
  stderr: string[];
  logFile: string;
}

/** A local server: its command, its variables (each from a place secret), the hosts it declares. */
export interface LocalCommand {
  command: string;
  args: string[];
  commandLine: string;
  env: { name: string; secret: string }[];
  hosts: string[];
  process?: LocalProcess;
}

export interface Connection {
  name: string;
  displayName: string;
  catalogId: string;
  /** A remote server's URL; a local one has `local` instead. */
  url?: string;
  transport: 'streamable-http' | 'sse' | 'stdio';
  local?: LocalCommand;
  owner: string;
  /** It uses the login of the person asking (only they can sign in to it). */
  mine: boolean;
  ownerName: string;
  /** `header`: an API key in a header, taken from the place secret `secretName`. */
  auth: 'oauth' | 'header' | 'none';
  /** An OAuth connection that signs in with the person's own OAuth app: its client id. */
  ownApp?: { clientId: string };
  /** An OAuth connection that logs in with machine credentials: its client id and how it proves itself (never the secret or key). */
  clientCredentials?: ClientCredentialsView;
  header?: string;
  /** Sent before the key in the header (e.g. "Bearer "). */
  prefix?: string;
  secretName?: string;
  state: ConnectionState;
  reason?: string;
  /** Connected: how many tools its server lists. */
  tools?: number;
  /** When its server was last asked (ISO time). */
  checkedAt?: string;
  /** A failing server is asked again on its own at this time (ISO). */
  nextCheckAt?: string;
  /** Tools turned off in this place. */
  disabledTools?: string[];
  /** Its last sign-in started here, while it waits for one: still in the browser, or failed and why. */
  signIn?: { state: 'pending'; since: string } | { state: 'failed'; reason: string; at: string };
  canRemove: boolean;
  addedAt: string;
}

export interface ConnectionDetails extends Connection {
  toolList: { name: string; description?: string; enabled: boolean }[];
  errors: { at: string; message: string }[];
}

export interface ConnectionEdit {
  name?: string;
  url?: string;
  local?: { command: string; args: string[]; env: Record<string, string>; hosts: string[] };
  header?: { name: string; prefix?: string; secret: string } | null;
  tools?: Record<string, boolean>;
  /** null: sign in without an own OAuth app again. */
  own_app?: OwnApp | null;
  /** null: sign in in the browser again. */
  client_credentials?: ClientCredentialsInput | null;
}

/** What a place's agents reach (machine, place or strict), and the owner's extra folders. */
export interface PlacePolicy {
  kind: 'machine' | 'place' | 'strict';
  folders: string[];
  /** The hosts its sandboxed commands may reach (beyond public hosts under place); absent: none. */
  network?: string[];
  /** Why this machine cannot sandbox the place's agents (they are refused meanwhile). */
  problem?: string;
  /** Paths the owner sealed beyond the credential stores (absolute or `~/...`). */
  seal?: string[];
  /** Under place and strict: each credential store, sealed unless lifted for this place. */
  credentialStores?: CredentialStoreState[];
  /** The place's own limits (absent: the machine's defaults). */
  limits?: Partial<Record<LimitName, number>>;
  /** Under place and strict: the limits as applied, and what this machine does not enforce. */
  limitsInEffect?: LimitsInEffect;
}

export interface PlaceConnections {
  place: Place;
  policy: PlacePolicy;
  rule: string;
  connections: Connection[];
}

export interface CatalogEntry {
  id: string;
  name: string;
  description: string;
  /** A remote server's URL; a local one has `local` instead. */
  url?: string;
  transport: 'streamable-http' | 'sse' | 'stdio';
  /** A local server: its launcher and package, the variables it reads, the hosts it needs (else those its launcher installs from). */
  local?: { command: 'npx' | 'uvx'; args: string[]; env: { name: string; description?: string; required: boolean; secret: boolean }[]; hosts?: string[] };
  auth: 'oauth' | 'api-key' | 'none';
  apiKey?: { header: string; prefix?: string };
  signInGroup?: string;
  needsOwnOAuthApp?: true;
  homepage?: string;
  docs?: string;
  source: 'built-in' | 'custom' | 'registry';
  registryName?: string;
}

export interface SignInGroup {
  id: string;
  name: string;
  description: string;
}

export interface CatalogListing {
  entries: CatalogEntry[];
  groups: SignInGroup[];
  registry: { state: 'ok' | 'loading' | 'failed' | 'disabled'; fetchedAt?: string; ageSeconds?: number; error?: string };
}

export type ConnectResult = { connection: Connection; tools: string[] } | { connection: Connection; authorizationUrl: string };

export interface OwnApp {
  client_id: string;
  client_secret?: string;
}

/** A local server to add: a program, its arguments, VAR → place secret, and hosts it needs. */
export interface AddLocalServer {
  name?: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  hosts: string[];
}

export interface AddServer {
  url: string;
  name?: string;
  header?: { name: string; prefix?: string; secret: string };
}

/** One server of an MCP client's configuration, as it would be added to the place (GET /api/import). */
export interface ImportItem {
  id: string;
  client: ClientId;
  clientName: string;
  scope: 'user' | 'project';
  file: string;
  name: string;
  kind: 'remote' | 'local';
  adds?: { url: string; transport: 'streamable-http' | 'sse'; header?: { name: string; prefix?: string; secret: string } } | { commandLine: string; env: Record<string, string>; hosts: string[] };
  secrets: { name: string; from: string }[];
  problem?: string;
  notes: string[];
}

export interface ImportPlan {
  place: Place;
  items: ImportItem[];
  problems: { client: ClientId; file: string; problem: string }[];
  files: { client: ClientId; scope: 'user' | 'project'; path: string; found: boolean }[];
}

export interface ImportResult {
  id: string;
  name: string;
  added?: Connection;
  error?: string;
}

/** The MCP clients whose configuration this app reads and writes. */
export type ClientId = 'claude-desktop' | 'cursor' | 'vscode' | 'claude-code';

/** Where each client's entry for this server would go (GET /api/client-configs). */
export interface ClientFiles {
  clients: { client: ClientId; name: string; files: { scope: 'user' | 'project'; path: string }[] }[];
}

/** What was written into a client's configuration (POST /api/client-configs). */
export interface WrittenClientEntry {
  written: { client: ClientId; clientName: string; file: string; name: string; entry: unknown; backup?: string; created: boolean; replaced: boolean };
  token?: { id: string; name: string };
}
