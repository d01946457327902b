import { Router, type Request, type Response } from 'express';
import * as z from 'zod';
import { createdTokenAnswer, revokedTokenAnswer, tokenAnswer, tokenBody, tokensAnswer } from '../../common/api/agent-tokens.js';
import { catalogListing } from '../../common/api/catalog.js';
import {
  addConnectionBody,
  addRequestOf,
  connectAnswer,
  connectBody,
  connectionAnswer,
  connectionDetailsAnswer,
  connectionEdit,
  connectManyAnswer,
  connectManyBody,
  placeConnectionsAnswer,
  installHostsAnswer,
  removedAnswer,
  secretBody,
  secretNamesAnswer,
  type OwnApp as OwnAppBody,
} from '../../common/api/connections.js';
import {
  placeAccessBody,
  placeNetworkBody,
  placePolicyAnswer,
  placePolicyBody,
  placeLimitsBody,
  placeSealsBody,
  placesAnswer,
  placeToolSearchAnswer,
  placeToolSearchBody,
  personBody,
  toolSearchBody,
  type PlacePolicy,
} from '../../common/api/places.js';
import { ACTIVITY_MAX_LIMIT, activityAnswer, serverInfo as serverInfoAnswer } from '../../common/api/server.js';
import type { OwnApp } from '../connections/upstream-oauth/connection-oauth.js';
import { installHosts } from '../connections/local/install-hosts.js';
import { PlaceAccessError } from '../connections/place-rules.js';
import { ANSWER_SOON_MS } from '../connections/place-connections.js';
import { sandboxProblem } from '../machine/sandbox/sandbox-check.js';
import type { SandboxLimits } from '../machine/sandbox/sandbox-limits.js';
import { policyOf } from '../places/access-directory.js';
import { CREDENTIAL_STORES } from '../places/credential-stores.js';
import type { SandboxPolicy } from '../places/sandbox-policy.js';
import { policyView } from '../places/policy-view.js';
import { canEdit } from '../places/access-rules.js';
import { listPlaces } from '../places/place-list.js';
import { placeRootOf, type Place } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { parseToolSearchMode } from '../../common/tool-search-mode.js';
import { placeToolSearch } from '../mcp/place-tool-search.js';
import type { HostControl } from './control-plane.js';
import { changeEvents } from './change-events.js';
import { signInRoutes } from './agent-sign-in-routes.js';
import { skillsRoutes } from './skills-routes.js';
import { clientConfigRoutes } from './client-config-routes.js';
import { serverInfo } from './server-info.js';
import { nativeModules } from '../native-modules.js';

/** The one-line rule the page shows above a place's connections (the place connections spec: no popup). */
export function connectionRule(place: Place): string {
  return `Each connection uses the login of the person who added it, and everyone who uses ${place.kind === 'machine' ? 'this machine' : `this ${kindWord(place)}`} uses it as that person, including every chat, schedule, trigger, workflow that calls it and Slack channel it answers in.`;
}

/** What an answer of the contract takes (common/api): the routes' answers are checked against it when built. */
type Answer<S extends z.ZodType> = z.input<S>;

/** The page's REST API: thin adapters over the places, connections, catalog and secrets. */
export function apiRoutes(services: Services, host: HostControl): Router {
  const { connections, config } = services;
  const router = Router();
  const person = (res: Response): string => res.locals.person as string;
  const placeOf = (req: Request): Place => {
    const raw =
      req.method === 'GET' || req.method === 'DELETE' || !req.body?.workspace_path ? req.query.workspace_path : req.body.workspace_path;
    return placeRootOf(config.workspaceRoot, typeof raw === 'string' ? raw : '');
  };
  const localOnly = (res: Response): void => {
    if (person(res) !== LOCAL_PERSON) throw new PlaceAccessError('Only the person who runs this app can do this.');
  };

  // What changed, as it happens: the page fetches again just that.
  router.get('/events', changeEvents(services.changes));

  router.get('/places', async (_req, res) => {
    res.json(await placesOf(services, person(res)));
  });

  router.get('/mcp/place', async (req, res) => {
    res.json(await placeConnectionsOf(services, person(res), placeOf(req)));
  });

  router.post('/mcp/place', async (req, res) => {
    const body = addConnectionBody.parse(req.body);
    const added = await connections.add(
      person(res),
      placeOf(req),
      addRequestOf(body),
      body.wait === false ? { waitMs: ANSWER_SOON_MS } : {},
    );
    res.status(201).json({ connection: added } satisfies Answer<typeof connectionAnswer>);
  });

  router.post('/mcp/place/connect', async (req, res) => {
    const body = connectManyBody.parse(req.body ?? {});
    res.json(
      (await connections.connectMany(person(res), placeOf(req), body.names, connectOptions(body))) satisfies Answer<
        typeof connectManyAnswer
      >,
    );
  });

  router.post('/mcp/place/:name/connect', async (req, res) => {
    const body = connectBody.parse(req.body ?? {});
    res.json(
      (await connections.connect(person(res), placeOf(req), String(req.params.name), connectOptions(body))) satisfies Answer<
        typeof connectAnswer
      >,
    );
  });

  router.get('/mcp/place/:name', async (req, res) => {
    res.json({ connection: await connections.details(person(res), placeOf(req), String(req.params.name), ownerOf(req)) } satisfies Answer<
      typeof connectionDetailsAnswer
    >);
  });

  // Fix in place: name, URL, transport, API-key header, own OAuth app or client credentials, and which tools are on.
  router.patch('/mcp/place/:name', async (req, res) => {
    const edit = connectionEdit.parse(req.body ?? {});
    res.json({
      connection: await connections.edit(person(res), placeOf(req), String(req.params.name), edit, ownerOf(req)),
    } satisfies Answer<typeof connectionAnswer>);
  });

  // Test: the server is asked now (initialize + tools/list with the connection's credentials).
  router.post('/mcp/place/:name/test', async (req, res) => {
    res.json({ connection: await connections.test(person(res), placeOf(req), String(req.params.name), ownerOf(req)) } satisfies Answer<
      typeof connectionAnswer
    >);
  });

  // Cancel: the check running now ends (its requests to the server too); the connection says so until checked again.
  router.post('/mcp/place/:name/cancel-check', async (req, res) => {
    res.json({
      connection: await connections.cancelCheck(person(res), placeOf(req), String(req.params.name), ownerOf(req)),
    } satisfies Answer<typeof connectionAnswer>);
  });

  router.delete('/mcp/place/:name', async (req, res) => {
    res.json({ removed: await connections.remove(person(res), placeOf(req), String(req.params.name), ownerOf(req)) } satisfies Answer<
      typeof removedAnswer
    >);
  });

  router.get('/catalog', (req, res) => {
    res.json(
      services.catalog.list({ ...(typeof req.query.search === 'string' && { search: req.query.search }) }) satisfies Answer<
        typeof catalogListing
      >,
    );
  });

  // The hosts installing a package with this launcher (npx, uvx) reaches here: the page asks for them at add, for the strict policy.
  router.get('/local-servers/install-hosts', async (req, res) => {
    res.json({ hosts: await installHosts(typeof req.query.command === 'string' ? req.query.command : '') } satisfies Answer<
      typeof installHostsAnswer
    >);
  });

  router.post('/catalog/refresh', async (_req, res) => {
    await services.catalog.refresh();
    res.json(services.catalog.list() satisfies Answer<typeof catalogListing>);
  });

  router.get('/secrets', async (req, res) => {
    res.json({ names: await connections.secretNames(person(res), placeOf(req)) } satisfies Answer<typeof secretNamesAnswer>);
  });

  router.put('/secrets/:name', async (req, res) => {
    const place = placeOf(req);
    const body = secretBody.parse(req.body);
    await connections.setSecret(person(res), place, String(req.params.name), body.value, { replace: body.replace ?? false });
    services.placeSessions.toolsChanged([place.root]);
    services.changes.publish({ topic: 'secrets', root: place.root });
    res.status(204).end();
  });

  router.delete('/secrets/:name', async (req, res) => {
    const place = placeOf(req);
    await connections.removeSecret(person(res), place, String(req.params.name));
    services.placeSessions.toolsChanged([place.root]);
    services.changes.publish({ topic: 'secrets', root: place.root });
    res.status(204).end();
  });

  router.get('/access', async (_req, res) => {
    localOnly(res);
    res.json(await services.access.snapshot());
  });

  router.put('/access/people/:id', async (req, res) => {
    localOnly(res);
    const body = personBody.parse(req.body);
    const snapshot = await services.access.setPerson(String(req.params.id), {
      name: body.name,
      ...(body.disabled !== undefined && { disabled: body.disabled }),
    });
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
    const snapshot = await services.access.setPlaceAccess(place.root, {
      ...(body.editors && { editors: body.editors }),
      ...(body.readers && { readers: body.readers }),
    });
    services.placeSessions.toolsChanged([place.root]);
    res.json(snapshot);
  });

  // Tool search: per place (in its access entry) and per token, the token's setting winning.
  router.get('/tool-search', async (req, res) => {
    localOnly(res);
    const place = placeOf(req);
    res.json({ workspace_path: place.root, label: place.label, ...(await placeToolSearch(services, place)) } satisfies Answer<
      typeof placeToolSearchAnswer
    >);
  });

  router.put('/access/places/tool-search', async (req, res) => {
    localOnly(res);
    const body = placeToolSearchBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    await services.access.setPlaceToolSearch(place.root, parseToolSearchMode(body.mode));
    services.placeSessions.toolsChanged([place.root]);
    res.json({ workspace_path: place.root, label: place.label, ...(await placeToolSearch(services, place)) } satisfies Answer<
      typeof placeToolSearchAnswer
    >);
  });

  router.get('/places/policy', async (req, res) => {
    localOnly(res);
    const place = placeOf(req);
    res.json({ policy: await policyAnswer(policyOf(await services.access.snapshot(), place), services.limits) } satisfies Answer<
      typeof placePolicyAnswer
    >);
  });

  /** A place's sandbox policy (This machine's applies to tokens that name no place): the owner's choice. */
  router.put('/places/policy', async (req, res) => {
    localOnly(res);
    const body = placePolicyBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlacePolicy(place.root, body.policy, body.folders);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) } satisfies Answer<typeof placePolicyAnswer>);
  });

  /** The hosts a place's sandboxed commands may reach through the app's proxy (empty: none beyond the policy's). */
  router.put('/places/network', async (req, res) => {
    localOnly(res);
    const body = placeNetworkBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlaceNetwork(place.root, body.hosts);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) } satisfies Answer<typeof placePolicyAnswer>);
  });

  /** What a place's agents find sealed beyond the credential stores (`seal`), and the stores lifted for it (`unseal`). */
  router.put('/places/seals', async (req, res) => {
    localOnly(res);
    const body = placeSealsBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, body.workspace_path);
    const snapshot = await services.access.setPlaceSeals(place.root, { seal: body.seal, unseal: body.unseal });
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) } satisfies Answer<typeof placePolicyAnswer>);
  });

  /** The limits of a place's sandboxed commands (processes, memory, /tmp): the place's own, else the machine's defaults. */
  router.put('/places/limits', async (req, res) => {
    localOnly(res);
    const { workspace_path, ...limits } = placeLimitsBody.parse(req.body);
    const place = placeRootOf(config.workspaceRoot, workspace_path);
    const snapshot = await services.access.setPlaceLimits(place.root, limits);
    res.json({ policy: await policyAnswer(policyOf(snapshot, place), services.limits) } satisfies Answer<typeof placePolicyAnswer>);
  });

  router.use(
    '/skills',
    skillsRoutes(config.skillsDir, localOnly, () => services.changes.publish({ topic: 'skills' })),
  );
  router.use(clientConfigRoutes(services, host, { person, placeOf, localOnly }));
  router.use('/agent-access', signInRoutes(services.approvals, localOnly));

  router.get('/server', async (_req, res) => {
    res.json({
      ...serverInfo(config, host.status(), {
        runningCommands: services.commands.runningCount,
        agentSessions: host.agentSessions(),
      }),
      nativeModules: await nativeModules(),
    } satisfies Answer<typeof serverInfoAnswer>);
  });

  // Agent access: the app's own tokens. The token itself is in the answer to its creation only.
  router.get('/tokens', async (_req, res) => {
    localOnly(res);
    res.json({ tokens: await services.tokens.list() } satisfies Answer<typeof tokensAnswer>);
  });

  router.post('/tokens', async (req, res) => {
    localOnly(res);
    const body = tokenBody.parse(req.body);
    const created = await services.tokens.create({
      name: body.name,
      ...(body.expires !== undefined && { expiresIn: body.expires }),
      ...(body.workspace_path !== undefined && { workspacePath: placeRootOf(config.workspaceRoot, body.workspace_path).root }),
    });
    res.status(201).json({ token: created } satisfies Answer<typeof createdTokenAnswer>);
  });

  router.delete('/tokens/:id', async (req, res) => {
    localOnly(res);
    res.json({ revoked: await services.tokens.revoke(String(req.params.id)) } satisfies Answer<typeof revokedTokenAnswer>);
  });

  router.put('/tokens/:id/tool-search', async (req, res) => {
    localOnly(res);
    const body = toolSearchBody.parse(req.body);
    const token = await services.tokens.setToolSearch(String(req.params.id), parseToolSearchMode(body.mode));
    services.placeSessions.toolsChanged(); // the token's sessions may be in any place
    res.json({ token } satisfies Answer<typeof tokenAnswer>);
  });

  /** Recent tool calls from the audit log, newest last (what, who, where, how long, how it ended). */
  router.get('/activity', async (req, res) => {
    localOnly(res);
    const limit = z.coerce.number().int().min(1).max(ACTIVITY_MAX_LIMIT).default(50).parse(req.query.limit);
    await services.audit.flush();
    res.json({ records: await services.audit.readRecent(limit) } satisfies Answer<typeof activityAnswer>);
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
    res.json(
      serverInfo(config, host.status(), {
        runningCommands: services.commands.runningCount,
        agentSessions: host.agentSessions(),
      }) satisfies Answer<typeof serverInfoAnswer>,
    );
  });

  router.post('/server/stop', async (_req, res) => {
    localOnly(res);
    await host.stop();
    res.json(
      serverInfo(config, host.status(), {
        runningCommands: services.commands.runningCount,
        agentSessions: host.agentSessions(),
      }) satisfies Answer<typeof serverInfoAnswer>,
    );
  });

  return router;
}

/** Whose connection, when several people added the same server (`?owner=`). */
function ownerOf(req: Request): string | undefined {
  return typeof req.query.owner === 'string' && req.query.owner ? req.query.owner : undefined;
}

/** `GET /api/places`: the places `person` can read, each with whether they may edit it. */
export async function placesOf(services: Services, person: string): Promise<Answer<typeof placesAnswer>> {
  const dir = await services.access.snapshot();
  const { places, truncated } = await listPlaces(services.config.workspaceRoot, dir, person, await services.store.roots());
  return { places: places.map((p) => ({ ...p, canEdit: canEdit(dir, person, p) })), truncated };
}

/**
 * `GET /api/mcp/place`: a place's connections with its policy and rule. `waitMs`: how long to wait
 * for the first check of a connection never checked yet (after that it is shown checking).
 */
export async function placeConnectionsOf(
  services: Services,
  person: string,
  place: Place,
  options: { waitMs?: number } = {},
): Promise<Answer<typeof placeConnectionsAnswer>> {
  const dir = await services.access.snapshot();
  return {
    place: { ...place, canEdit: canEdit(dir, person, place) },
    policy: await policyAnswer(policyOf(dir, place), services.limits),
    rule: connectionRule(place),
    connections: await services.connections.list(person, place, options),
  };
}

/**
 * A place's policy with what this machine makes of it: why it cannot sandbox (its agents are then
 * refused), the credential stores sealed or lifted, the limits in effect.
 */
async function policyAnswer(policy: SandboxPolicy, limits: SandboxLimits): Promise<PlacePolicy> {
  if (policy.kind === 'machine') return policyView(policy);
  const problem = await sandboxProblem();
  const lifted = new Set(policy.unseal ?? []);
  return {
    ...policyView(policy),
    ...(problem && { problem: `${problem} Until then, this place's agents are refused.` }),
    credentialStores: CREDENTIAL_STORES.map(({ name, what }) => ({ name, what, lifted: lifted.has(name) })),
    limitsInEffect: limits.inEffect(policy.limits),
  };
}

function connectOptions(body: z.infer<typeof connectBody>): { ownApp?: OwnApp; openBrowser: boolean } {
  return { ...(body.own_app && { ownApp: ownAppOf(body.own_app) }), openBrowser: body.open_browser ?? true };
}

function ownAppOf(body: OwnAppBody): OwnApp {
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
