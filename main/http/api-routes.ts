import { Router, type Request, type Response } from 'express';
import * as z from 'zod';
import type { CredentialStoreState } from '../../common/api/place-policy.js';
import { type ClientCredentialsInput, clientCredentialsInput, DEFAULT_JWT_ALGORITHM } from '../../common/api/client-credentials.js';
import type { ClientCredentials, OwnApp } from '../connections/oauth/connection-oauth.js';
import { installHosts } from '../connections/local/install-hosts.js';
import { PlaceAccessError } from '../connections/place-rules.js';
import { sandboxProblem } from '../machine/sandbox/sandbox-check.js';
import type { LimitsInEffect, SandboxLimits } from '../machine/sandbox/sandbox-limits.js';
import { policyOf } from '../places/access-directory.js';
import { CREDENTIAL_STORES } from '../places/credential-stores.js';
import type { SandboxPolicy } from '../places/sandbox-policy.js';
import { MAX_ALLOWED_HOSTS } from '../places/network-allow-list.js';
import { canEdit } from '../places/access-rules.js';
import { listPlaces } from '../places/place-list.js';
import { placeRootOf, type Place } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { parseToolSearchMode } from '../../common/tool-search-mode.js';
import { placeToolSearch } from './agent-endpoint.js';
import type { HostControl } from './control-plane.js';
import { signInRoutes } from './sign-in-routes.js';
import { skillsRoutes } from './skills-routes.js';
import { clientConfigRoutes } from './client-config-routes.js';
import { serverInfo } from './server-info.js';

/** The one-line rule the page shows above a place's connections (the place connections spec: no popup). */
export function connectionRule(place: Place): string {
  return `Each connection uses the login of the person who added it, and everyone who uses ${place.kind === 'machine' ? 'this machine' : `this ${kindWord(place)}`} uses it as that person, including every chat, schedule, trigger, workflow that calls it and Slack channel it answers in.`;
}

const transport = z.enum(['streamable-http', 'sse']);
const headerBody = z.object({ name: z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'a header name: letters, digits and -'), prefix: z.string().max(50).regex(/^[^\p{Cc}]*$/u, 'no control characters or line breaks').optional(), secret: z.string().min(1) }).strict();
/** A local server: a program, its arguments, variables from place secrets (VAR: SECRET) and the hosts it needs. */
const localFields = {
  command: z.string().min(1).max(1000),
  args: z.array(z.string().max(4000)).max(100).optional(),
  env: z.record(z.string().max(128), z.string().min(1).max(64)).optional(),
  hosts: z.array(z.string().max(300)).max(MAX_ALLOWED_HOSTS).optional(),
};
const addBody = z.union([
  z.object({ workspace_path: z.string().optional(), catalog: z.string().min(1), secret: z.string().min(1).optional(), env: localFields.env }).strict(),
  z.object({ workspace_path: z.string().optional(), name: z.string().max(100).optional(), ...localFields }).strict(),
  z
    .object({
      workspace_path: z.string().optional(),
      server: z
        .object({
          url: z.string().min(1),
          name: z.string().max(100).optional(),
          transport: transport.optional(),
          header: headerBody.optional(),
        })
        .strict(),
    })
    .strict(),
]);
/** The person's own OAuth app at the provider, for providers that let no app register itself. */
const ownAppBody = z.object({ client_id: z.string().min(1).max(500), client_secret: z.string().min(1).max(2000).optional() }).strict();
const editBody = z
  .object({
    name: z.string().max(100).optional(),
    /** null: sign in without an own app again. */
    own_app: ownAppBody.nullable().optional(),
    /** null: sign in in the browser again. */
    client_credentials: clientCredentialsInput.nullable().optional(),
    url: z.string().min(1).optional(),
    transport: transport.optional(),
    header: headerBody.nullable().optional(),
    tools: z.record(z.string(), z.boolean()).optional(),
    /** A local server's command, arguments, variables and hosts, replaced together. */
    local: z.object(localFields).strict().optional(),
  })
  .strict();
/** `replace`: the person agreed to change the value of a secret the place already has. */
const secretBody = z.object({ value: z.string(), replace: z.boolean().optional() }).strict();
/** The own-OAuth-app panel: the person's own client, for providers that let no app register itself. */
const connectBody = z
  .object({
    own_app: ownAppBody.optional(),
    /** false when the caller opens the sign-in page itself (the page does), so it does not open twice. */
    open_browser: z.boolean().optional(),
  })
  .strict();
/** A sign-in group's "Connect N services": the caller's connections, connected as one. */
const connectManyBody = connectBody.extend({ names: z.array(z.string().min(1).max(200)).min(1).max(50) }).strict();
const tokenBody = z.object({ name: z.string(), expires: z.string().optional(), workspace_path: z.string().optional() }).strict();
const toolSearchBody = z.object({ mode: z.string() }).strict();
const placeToolSearchBody = toolSearchBody.extend({ workspace_path: z.string() }).strict();
const personBody = z.object({ name: z.string(), disabled: z.boolean().optional() }).strict();
const placeAccessBody = z.object({ workspace_path: z.string(), editors: z.array(z.string()).optional(), readers: z.array(z.string()).optional() }).strict();
const placePolicyBody = z.object({ workspace_path: z.string(), policy: z.string(), folders: z.array(z.string()).optional() }).strict();
const placeNetworkBody = z.object({ workspace_path: z.string(), hosts: z.array(z.string().max(300)).max(MAX_ALLOWED_HOSTS) }).strict();
/** A place's limits, replaced whole: a limit left out is the machine's default. */
const placeLimitsBody = z.object({ workspace_path: z.string(), processes: z.number().optional(), memoryMb: z.number().optional(), tmpMb: z.number().optional() }).strict();
const placeSealsBody = z.object({ workspace_path: z.string(), seal: z.array(z.string().max(4096)).max(100), unseal: z.array(z.string().max(100)).max(100) }).strict();

/** The page's REST API: thin adapters over the places, connections, catalog and secrets. */
export function apiRoutes(services: Services, host: HostControl): Router {
  const { connections, config } = services;
  const router = Router();
  const person = (res: Response): string => res.locals.person as string;
  const placeOf = (req: Request): Place => {
    const raw = req.method === 'GET' || req.method === 'DELETE' || !req.body?.workspace_path ? req.query.workspace_path : req.body.workspace_path;
    return placeRootOf(config.workspaceRoot, typeof raw === 'string' ? raw : '');
  };
  const localOnly = (res: Response): void => {
    if (person(res) !== LOCAL_PERSON) throw new PlaceAccessError('Only the person who runs this app can do this.');
  };

  router.get('/places', async (_req, res) => {
    const dir = await services.access.snapshot();
    const { places, truncated } = await listPlaces(config.workspaceRoot, dir, person(res), await services.store.roots());
    res.json({ places: places.map((p) => ({ ...p, canEdit: canEdit(dir, person(res), p) })), truncated });
  });

  router.get('/mcp/place', async (req, res) => {
    const place = placeOf(req);
    const dir = await services.access.snapshot();
    res.json({
      place: { ...place, canEdit: canEdit(dir, person(res), place) },
      policy: await policyAnswer(policyOf(dir, place), services.limits),
      rule: connectionRule(place),
      connections: await connections.list(person(res), place),
    });
  });

  router.post('/mcp/place', async (req, res) => {
    const body = addBody.parse(req.body);
    const place = placeOf(req);
    const request =
      'catalog' in body
        ? { catalog: body.catalog, ...(body.secret && { secret: body.secret }), ...(body.env && { env: body.env }) }
        : 'command' in body
          ? { local: { command: body.command, ...(body.args && { args: body.args }), ...(body.env && { env: body.env }), ...(body.hosts && { hosts: body.hosts }), ...(body.name && { name: body.name }) } }
          : { server: body.server };
    res.status(201).json({ connection: await connections.add(person(res), place, request) });
  });

  router.post('/mcp/place/connect', async (req, res) => {
    const body = connectManyBody.parse(req.body ?? {});
    res.json(await connections.connectMany(person(res), placeOf(req), body.names, connectOptions(body)));
  });

  router.post('/mcp/place/:name/connect', async (req, res) => {
    const body = connectBody.parse(req.body ?? {});
    res.json(await connections.connect(person(res), placeOf(req), String(req.params.name), connectOptions(body)));
  });

  router.get('/mcp/place/:name', async (req, res) => {
    res.json({ connection: await connections.details(person(res), placeOf(req), String(req.params.name), ownerOf(req)) });
  });

  // Fix in place: name, URL, transport, API-key header, own OAuth app or client credentials, and which tools are on.
  router.patch('/mcp/place/:name', async (req, res) => {
    const { own_app, client_credentials, ...body } = editBody.parse(req.body ?? {});
    const edit = {
      ...body,
      ...(own_app !== undefined && { ownApp: own_app && ownAppOf(own_app) }),
      ...(client_credentials !== undefined && { clientCredentials: client_credentials && credentialsOf(client_credentials) }),
    };
    res.json({ connection: await connections.edit(person(res), placeOf(req), String(req.params.name), edit, ownerOf(req)) });
  });

  // Test: the server is asked now (initialize + tools/list with the connection's credentials).
  router.post('/mcp/place/:name/test', async (req, res) => {
    const owner = typeof req.query.owner === 'string' && req.query.owner ? req.query.owner : undefined;
    res.json({ connection: await connections.test(person(res), placeOf(req), String(req.params.name), owner) });
  });

  router.delete('/mcp/place/:name', async (req, res) => {
    const owner = typeof req.query.owner === 'string' && req.query.owner ? req.query.owner : undefined;
    res.json({ removed: await connections.remove(person(res), placeOf(req), String(req.params.name), owner) });
  });

  router.get('/catalog', (req, res) => {
    res.json(services.catalog.list({ ...(typeof req.query.search === 'string' && { search: req.query.search }) }));
  });

  // The hosts installing a package with this launcher (npx, uvx) reaches here: the page asks for them at add, for the strict policy.
  router.get('/local-servers/install-hosts', async (req, res) => {
    res.json({ hosts: await installHosts(typeof req.query.command === 'string' ? req.query.command : '') });
  });

  router.post('/catalog/refresh', async (_req, res) => {
    await services.catalog.refresh();
    res.json(services.catalog.list());
  });

  router.get('/secrets', async (req, res) => {
    res.json({ names: await connections.secretNames(person(res), placeOf(req)) });
  });

  router.put('/secrets/:name', async (req, res) => {
    const place = placeOf(req);
    const body = secretBody.parse(req.body);
    await connections.setSecret(person(res), place, String(req.params.name), body.value, { replace: body.replace ?? false });
    services.placeSessions.toolsChanged([place.root]);
    res.status(204).end();
  });

  router.delete('/secrets/:name', async (req, res) => {
    const place = placeOf(req);
    await connections.removeSecret(person(res), place, String(req.params.name));
    services.placeSessions.toolsChanged([place.root]);
    res.status(204).end();
  });

  router.get('/access', async (_req, res) => {
    localOnly(res);
    res.json(await services.access.snapshot());
  });

  router.put('/access/people/:id', async (req, res) => {
    localOnly(res);
    const body = personBody.parse(req.body);
    const snapshot = await services.access.setPerson(String(req.params.id), { name: body.name, ...(body.disabled !== undefined && { disabled: body.disabled }) });
    services.placeSessions.toolsChanged(); // a disabled adder's connections pause everywhere
    res.json(snapshot);
  });

  router.delete('/access/people/:id', async (req, res) => {
    localOnly(res);
    const snapshot = await services.access.removePerson(String(req.params.id));
    services.placeSessions.toolsChanged();
    res.json(snapshot);
  });

  router.put('/access/places', async (req, res) => {
    localOnly(res);
    const body = placeAccessBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlaceAccess(place.root, { ...(body.editors && { editors: body.editors }), ...(body.readers && { readers: body.readers }) });
    services.placeSessions.toolsChanged([place.root]);
    res.json(snapshot);
  });

  // Tool search: per place (in its access entry) and per token, the token's setting winning.
  router.get('/tool-search', async (req, res) => {
    localOnly(res);
    const place = placeOf(req);
    res.json({ workspace_path: place.root, label: place.label, ...(await placeToolSearch(services, place)) });
  });

  router.put('/access/places/tool-search', async (req, res) => {
    localOnly(res);
    const body = placeToolSearchBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    await services.access.setPlaceToolSearch(place.root, parseToolSearchMode(body.mode));
    services.placeSessions.toolsChanged([place.root]);
    res.json({ workspace_path: place.root, label: place.label, ...(await placeToolSearch(services, place)) });
  });

  /** A place's policy with the limits in effect, as this server found what the machine enforces (the CLI shows this). */
  router.get('/places/policy', async (req, res) => {
    localOnly(res);
    const place = placeOf(req);
    res.json({ policy: await policyAnswer(policyOf(await services.access.snapshot(), place), services.limits) });
  });

  /** A place's sandbox policy (This machine's applies to tokens that name no place): the owner's choice. */
  router.put('/places/policy', async (req, res) => {
    localOnly(res);
    const body = placePolicyBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlacePolicy(place.root, body.policy, body.folders);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) });
  });

  /** The hosts a place's sandboxed commands may reach through the app's proxy (empty: none beyond the policy's). */
  router.put('/places/network', async (req, res) => {
    localOnly(res);
    const body = placeNetworkBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlaceNetwork(place.root, body.hosts);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) });
  });

  /** What a place's agents find sealed beyond the credential stores (`seal`), and the stores lifted for it (`unseal`). */
  router.put('/places/seals', async (req, res) => {
    localOnly(res);
    const body = placeSealsBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlaceSeals(place.root, { seal: body.seal, unseal: body.unseal });
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) });
  });

  /** The limits of a place's sandboxed commands (processes, memory, /tmp): the place's own, else the machine's defaults. */
  router.put('/places/limits', async (req, res) => {
    localOnly(res);
    const { workspace_path, ...limits } = placeLimitsBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, workspace_path);
    const snapshot = await services.access.setPlaceLimits(place.root, limits);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) });
  });

  router.use('/skills', skillsRoutes(config.skillsDir, localOnly));
  router.use(clientConfigRoutes(services, host, { person, placeOf, localOnly }));
  router.use('/agent-access', signInRoutes(services.approvals, localOnly));

  router.get('/server', (_req, res) => {
    res.json(serverInfo(config, host.status(), { runningCommands: services.commands.runningCount, agentSessions: host.agentSessions() }));
  });

  // Agent access: the app's own tokens. The token itself is in the answer to its creation only.
  router.get('/tokens', async (_req, res) => {
    localOnly(res);
    res.json({ tokens: await services.tokens.list() });
  });

  router.post('/tokens', async (req, res) => {
    localOnly(res);
    const body = tokenBody.parse(req.body);
    const created = await services.tokens.create({
      name: body.name,
      ...(body.expires !== undefined && { expiresIn: body.expires }),
      ...(body.workspace_path !== undefined && { workspacePath: placeRootOf(config.workspaceRoot, body.workspace_path).root }),
    });
    res.status(201).json({ token: created });
  });

  router.delete('/tokens/:id', async (req, res) => {
    localOnly(res);
    res.json({ revoked: await services.tokens.revoke(String(req.params.id)) });
  });

  router.put('/tokens/:id/tool-search', async (req, res) => {
    localOnly(res);
    const body = toolSearchBody.parse(req.body);
    const token = await services.tokens.setToolSearch(String(req.params.id), parseToolSearchMode(body.mode));
    services.placeSessions.toolsChanged(); // the token's sessions may be in any place
    res.json({ token });
  });

  /** Recent tool calls from the audit log, newest last (what, who, where, how long, how it ended). */
  router.get('/activity', async (req, res) => {
    localOnly(res);
    const limit = z.coerce.number().int().min(1).max(500).default(50).parse(req.query.limit);
    await services.audit.flush();
    res.json({ records: await services.audit.readRecent(limit) });
  });

  // A start that fails (port in use, ...) answers the failed state with why: the page shows it as the server's state.
  router.post('/server/start', async (_req, res) => {
    localOnly(res);
    try {
      await host.start();
    } catch (error) {
      const status = host.status();
      // Still starting or stopping: the host refused to start now, and says to wait.
      if (status.state !== 'failed') {
        res.status(409).json({ error: { message: (error as Error).message } });
        return;
      }
    }
    res.json(serverInfo(config, host.status(), { runningCommands: services.commands.runningCount, agentSessions: host.agentSessions() }));
  });

  router.post('/server/stop', async (_req, res) => {
    localOnly(res);
    await host.stop();
    res.json(serverInfo(config, host.status(), { runningCommands: services.commands.runningCount, agentSessions: host.agentSessions() }));
  });

  return router;
}

/** Whose connection, when several people added the same server (`?owner=`). */
function ownerOf(req: Request): string | undefined {
  return typeof req.query.owner === 'string' && req.query.owner ? req.query.owner : undefined;
}

/**
 * A place's policy with what this machine makes of it: why it cannot sandbox (its agents are then
 * refused), the credential stores sealed or lifted, the limits in effect.
 */
async function policyAnswer(
  policy: SandboxPolicy,
  limits: SandboxLimits,
): Promise<SandboxPolicy & { problem?: string; credentialStores?: CredentialStoreState[]; limitsInEffect?: LimitsInEffect }> {
  if (policy.kind === 'machine') return policy;
  const problem = await sandboxProblem();
  const lifted = new Set(policy.unseal ?? []);
  return {
    ...policy,
    ...(problem && { problem: `${problem} Until then, this place's agents are refused.` }),
    credentialStores: CREDENTIAL_STORES.map(({ name, what }) => ({ name, what, lifted: lifted.has(name) })),
    limitsInEffect: limits.inEffect(policy.limits),
  };
}

function connectOptions(body: z.infer<typeof connectBody>): { ownApp?: OwnApp; openBrowser: boolean } {
  return { ...(body.own_app && { ownApp: ownAppOf(body.own_app) }), openBrowser: body.open_browser ?? true };
}

function credentialsOf(body: ClientCredentialsInput): ClientCredentials {
  if ('client_secret' in body) return { clientId: body.client_id, clientSecret: body.client_secret };
  return { clientId: body.client_id, privateKey: body.private_key, algorithm: body.signing_algorithm ?? DEFAULT_JWT_ALGORITHM };
}

function ownAppOf(body: z.infer<typeof ownAppBody>): OwnApp {
  return { clientId: body.client_id, ...(body.client_secret && { clientSecret: body.client_secret }) };
}

function kindWord(place: Place): string {
  switch (place.kind) {
    case 'workflow':
      return 'workflow';
    case 'crew':
      return 'Crew';
    case 'code':
      return 'Code';
    default:
      return 'project';
  }
}
