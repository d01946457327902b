import * as z from 'zod';
import { clientCredentialsInput, clientCredentialsView } from './client-credentials.js';
import { MAX_ALLOWED_HOSTS, placeForPerson, placePolicy } from './places.js';

// A place's MCP connections as the API gives and takes them: the page, the CLI and the agent tool show these.

/**
 * Whether a connection works for the place's agents now, and if not, why: measured by asking its
 * server (connected, checking, sign-in, key-refused, unreachable, not-mcp, too-large), cancelled
 * (a person cancelled its check before the server answered: unknown until checked again), or known
 * without asking (paused, needs-secret, and sign-in for a login that does not exist).
 */
export const connectionState = z.enum([
  'connected',
  'checking',
  'cancelled',
  'sign-in',
  'key-refused',
  'unreachable',
  'not-mcp',
  'too-large',
  'paused',
  'needs-secret',
]);
export type ConnectionState = z.infer<typeof connectionState>;

export const transport = z.enum(['streamable-http', 'sse']);

/** A local server's process as the running server knows it. */
export const localProcess = z.object({
  /** stopping: being ended, until it has exited. */
  state: z.enum(['running', 'starting', 'stopping', 'stopped']),
  pid: z.number().optional(),
  /** ISO time it started (running), or ended (stopped after running). */
  since: z.string().optional(),
  /** Why it is stopped (or being stopped): never started yet, ended after being idle, or how it exited. */
  stopped: z.string().optional(),
  /** Its last stderr lines, newest last. */
  stderr: z.array(z.string()),
  /** Where its whole stderr is (in the state dir). */
  logFile: z.string(),
});
export type LocalProcess = z.infer<typeof localProcess>;

/** A local server as every surface shows it: never a secret value (only the secrets' names). */
export const localView = z.object({
  command: z.string(),
  args: z.array(z.string()),
  /** The command line as a person reads it. */
  commandLine: z.string(),
  /** Each variable and the place secret its value comes from. */
  env: z.array(z.object({ name: z.string(), secret: z.string() })),
  /** Hosts it may reach beyond the place's network allow-list (when the policy sandboxes it). */
  hosts: z.array(z.string()),
  /** Its process now; absent before its first use in this server. */
  process: localProcess.optional(),
});
export type LocalView = z.infer<typeof localView>;

/** A connection as every surface shows it: never a secret value. */
export const connectionView = z.object({
  name: z.string(),
  displayName: z.string(),
  catalogId: z.string(),
  /** A remote server's URL; a local one has `local` instead. */
  url: z.string().optional(),
  transport: z.enum(['streamable-http', 'sse', 'stdio']),
  local: localView.optional(),
  owner: z.string(),
  /** The adder's name in the access directory, else their id. */
  ownerName: z.string(),
  /** `header`: an API key in a header, taken from the place secret `secretName`. */
  auth: z.enum(['oauth', 'header', 'none']),
  /** For OAuth connections that sign in with the person's own OAuth app: its client id (never its secret). */
  ownApp: z.object({ clientId: z.string() }).optional(),
  /** For OAuth connections that log in with machine credentials: the client id and how it proves itself (never the secret or key). */
  clientCredentials: clientCredentialsView.optional(),
  header: z.string().optional(),
  /** Sent before the key in the header (e.g. "Bearer "). */
  prefix: z.string().optional(),
  secretName: z.string().optional(),
  state: connectionState,
  /** Why it is not connected, in words a person can act on. */
  reason: z.string().optional(),
  /** Connected: how many tools its server lists. */
  tools: z.number().optional(),
  /** Tools turned off in this place (hidden from agents and refused), by their upstream names. */
  disabledTools: z.array(z.string()).optional(),
  /** When its server was last asked (ISO time); absent when it never was. */
  checkedAt: z.string().optional(),
  /** Checking: when the check running now started (ISO time). */
  checkingSince: z.string().optional(),
  /** A failing server is checked again on its own at this time (ISO). */
  nextCheckAt: z.string().optional(),
  /** Its last sign-in started here, while it waits for one: still pending in the browser, or failed and why. */
  signIn: z
    .discriminatedUnion('state', [
      z.object({ state: z.literal('pending'), since: z.string() }),
      z.object({ state: z.literal('failed'), reason: z.string(), at: z.string() }),
    ])
    .optional(),
  /** Whether it uses the login of the person asking (only they can sign in to it). */
  mine: z.boolean(),
  /** Whether the person asking may remove it. */
  canRemove: z.boolean(),
  addedAt: z.string(),
});
export type ConnectionView = z.infer<typeof connectionView>;

/** A connection with what its server last said: its tools (each on or off), and its last errors. */
export const connectionDetails = connectionView.extend({
  toolList: z.array(z.object({ name: z.string(), description: z.string().optional(), enabled: z.boolean() })),
  errors: z.array(z.object({ at: z.string(), message: z.string() })),
});
export type ConnectionDetails = z.infer<typeof connectionDetails>;

/** GET /api/mcp/place?workspace_path= */
export const placeConnectionsAnswer = z.object({
  place: placeForPerson,
  policy: placePolicy,
  /** The one-line rule shown above the connections. */
  rule: z.string(),
  connections: z.array(connectionView),
});
export type PlaceConnectionsAnswer = z.infer<typeof placeConnectionsAnswer>;

/** An API-key header: sent with the value of the place secret `secret`. */
export const headerSpec = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'a header name: letters, digits and -'),
    prefix: z
      .string()
      .max(50)
      .regex(/^[^\p{Cc}]*$/u, 'no control characters or line breaks')
      .optional(),
    secret: z.string().min(1),
  })
  .strict();

/** The person's own OAuth app at the provider, for providers that let no app register itself. */
export const ownApp = z.object({ client_id: z.string().min(1).max(500), client_secret: z.string().min(1).max(2000).optional() }).strict();
export type OwnApp = z.infer<typeof ownApp>;

/** A server that is not listed in the catalog. */
export const serverSpec = z
  .object({
    url: z.string().min(1),
    name: z.string().max(100).optional(),
    transport: transport.optional(),
    header: headerSpec.optional(),
  })
  .strict();
export type ServerSpec = z.infer<typeof serverSpec>;

/** A local server: a program, its arguments, variables from place secrets (VAR: SECRET) and the hosts it needs. */
const localFields = {
  command: z.string().min(1).max(1000),
  args: z.array(z.string().max(4000)).max(100).optional(),
  env: z.record(z.string().max(128), z.string().min(1).max(64)).optional(),
  hosts: z.array(z.string().max(300)).max(MAX_ALLOWED_HOSTS).optional(),
};
export const localCommand = z.object(localFields).strict();
export type LocalCommandInput = z.infer<typeof localCommand>;
/** A local server as a person adds it: its command, variables, hosts, and a name. */
export const localServerSpec = localCommand.extend({ name: z.string().max(100).optional() }).strict();
export type LocalServerSpec = z.infer<typeof localServerSpec>;

/** What to add: a catalog connector (with the secret of its API key, if it takes one), or a server that is not listed. */
const catalogFields = {
  catalog: z.string().min(1),
  /** A remote entry's API key: the place secret that holds it. */
  secret: z.string().min(1).optional(),
  /** A local entry's variables: VAR → the place secret that holds its value. */
  env: localFields.env,
};

export const addConnection = z.union([
  z.object(catalogFields).strict(),
  z.object({ server: serverSpec }).strict(),
  z.object({ local: localServerSpec }).strict(),
]);
export type AddConnection = z.infer<typeof addConnection>;

/** POST /api/mcp/place: what to add (a local server's fields at the top level), and where. */
const where = {
  workspace_path: z.string().optional(),
  /**
   * false: answer as soon as the connection is saved (within a couple of seconds), with its state
   * then ("checking" while its server has not answered); the check goes on and its outcome reaches
   * every surface as it comes. Absent or true: answer with what its server answered.
   */
  wait: z.boolean().optional(),
};
export const addConnectionBody = z.union([
  z.object({ ...where, ...catalogFields }).strict(),
  z.object({ ...where, server: serverSpec }).strict(),
  z.object({ ...where, name: z.string().max(100).optional(), ...localFields }).strict(),
]);
export type AddConnectionBody = z.input<typeof addConnectionBody>;

/** The body of POST /api/mcp/place that asks for `request` in the place `workspacePath`. */
export function addBodyOf(where: { workspace_path: string; wait?: boolean }, request: AddConnection): AddConnectionBody {
  return 'local' in request ? { ...where, ...request.local } : { ...where, ...request };
}

/** What an add request asks for, without where. */
export function addRequestOf(body: z.infer<typeof addConnectionBody>): AddConnection {
  if ('catalog' in body) return { catalog: body.catalog, ...(body.secret && { secret: body.secret }), ...(body.env && { env: body.env }) };
  if ('server' in body) return { server: body.server };
  const { workspace_path: _, wait: __, ...local } = body;
  return { local };
}

/** A change to a connection in place (PATCH /api/mcp/place/:name, `connections edit`, the page's Fix). */
export const connectionEdit = z
  .object({
    name: z.string().max(100).optional(),
    url: z.string().min(1).optional(),
    transport: transport.optional(),
    /** A local server's command, arguments, variables and hosts, replaced together. */
    local: localCommand.optional(),
    /** The API-key header and the place secret it sends; null sends none. */
    header: headerSpec.nullable().optional(),
    /** Upstream tool names turned on (true) or off (false). */
    tools: z.record(z.string(), z.boolean()).optional(),
    /**
     * An OAuth connection's own OAuth app; null signs in by registration again. The login made with
     * the old app ends: the next sign-in uses the new one.
     */
    own_app: ownApp.nullable().optional(),
    /**
     * An OAuth connection's machine credentials (no browser); null goes back to signing in in the
     * browser. The login made before ends: Connect logs in with the new ones.
     */
    client_credentials: clientCredentialsInput.nullable().optional(),
  })
  .strict();
export type ConnectionEdit = z.infer<typeof connectionEdit>;

/** POST /api/mcp/place/:name/connect */
export const connectBody = z
  .object({
    own_app: ownApp.optional(),
    /** false when the caller opens the sign-in page itself (the page does), so it does not open twice. */
    open_browser: z.boolean().optional(),
  })
  .strict();
/** POST /api/mcp/place/connect: a sign-in group's "Connect N services", connected as one. */
export const connectManyBody = connectBody.extend({ names: z.array(z.string().min(1).max(200)).min(1).max(50) }).strict();

/** Connected now with its tools, or a sign-in to open. */
export const connectAnswer = z.union([
  z.object({ connection: connectionView, tools: z.array(z.string()) }),
  z.object({ connection: connectionView, authorizationUrl: z.string() }),
]);
export type ConnectAnswer = z.infer<typeof connectAnswer>;

export const connectManyAnswer = z.object({
  connections: z.array(connectionView),
  /** Each one's own sign-in link (opened alone, it goes on through the rest). */
  signIns: z.array(z.object({ name: z.string(), authorizationUrl: z.string() })),
  /** The chain's first link, when any sign-in is needed. */
  authorizationUrl: z.string().optional(),
});

/** The answer to add, edit, test and cancel (POST /api/mcp/place/:name/cancel-check: ends the check running now). */
export const connectionAnswer = z.object({ connection: connectionView });
export const connectionDetailsAnswer = z.object({ connection: connectionDetails });
export const removedAnswer = z.object({ removed: connectionView });

/** PUT /api/secrets/:name; `replace`: the person agreed to change the value of a secret the place already has. */
export const secretBody = z.object({ value: z.string(), replace: z.boolean().optional() }).strict();
/** GET /api/secrets: the names only, never the values. */
export const secretNamesAnswer = z.object({ names: z.array(z.string()) });

/** GET /api/local-servers/install-hosts?command=: the hosts installing a package with this launcher (npx, uvx) reaches here. */
export const installHostsAnswer = z.object({ hosts: z.array(z.string()) });
