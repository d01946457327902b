import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Router, type Request, type Response } from 'express';
import * as z from 'zod';
import { CLIENT_NAMES, CLIENTS, projectFiles, userFiles, type Machine } from '../connections/client-configs/client-files.js';
import { entryFor, writeServerEntry } from '../connections/client-configs/client-entry.js';
import { ClientImport } from '../connections/client-configs/client-import.js';
import { ConnectionRequestError } from '../connections/place-rules.js';
import type { Place } from '../places/place-root.js';
import type { Services } from '../services.js';
import type { HostControl } from './control-plane.js';

const importBody = z.object({ workspace_path: z.string().optional(), items: z.array(z.string().max(64)).min(1).max(200) }).strict();
const writeBody = z
  .object({
    workspace_path: z.string().optional(),
    client: z.enum(CLIENTS),
    /** `token`: a new token of this app goes in the entry; `oauth`: the URL only, the client signs in. */
    auth: z.enum(['token', 'oauth']),
    /** `project`: the place folder's own file rather than the person's. */
    scope: z.enum(['user', 'project']).optional(),
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . and -').optional(),
    replace: z.boolean().optional(),
  })
  .strict();

/** The machine whose clients are read: the home folder and environment of the person who runs the app. */
export function machineOf(env: NodeJS.ProcessEnv): Machine {
  return { home: env.HOME && env.HOME.startsWith('/') ? env.HOME : homedir(), platform: process.platform, env };
}

/** This server's MCP URL for a client on this machine: the public one, the running one, else the configured address. */
export function mcpUrlOf(config: Services['config'], host: Pick<HostControl, 'status'>): string {
  if (config.publicUrl) return `${config.publicUrl}/mcp`;
  const status = host.status();
  if (status.state === 'running') return status.url;
  if (config.port === 0) throw new ConnectionRequestError('The server has no port yet (it picks one when it starts). Start it, then write the configuration.', 409);
  const address = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${address}:${config.port}/mcp`;
}

/**
 * Import from the MCP clients on this machine (what would be added, then the chosen ones), and
 * this server's entry written into a client's configuration. The owner's only: these are the
 * person's own files.
 */
export function clientConfigRoutes(services: Services, host: HostControl, helpers: { person: (res: Response) => string; placeOf: (req: Request) => Place; localOnly: (res: Response) => void }): Router {
  const { config } = services;
  const router = Router();
  const machine = machineOf(services.env);
  const importer = new ClientImport({ connections: services.connections, workspaceRoot: config.workspaceRoot, machine, allowPrivateNetwork: config.allowPrivateNetwork });

  router.get('/import', async (req, res) => {
    helpers.localOnly(res);
    res.json(await importer.plan(helpers.person(res), helpers.placeOf(req)));
  });

  router.post('/import', async (req, res) => {
    helpers.localOnly(res);
    const body = importBody.parse(req.body);
    const place = helpers.placeOf(req);
    const results = await importer.run(helpers.person(res), place, body.items);
    services.placeSessions.toolsChanged([place.root]);
    res.json({ results });
  });

  // Which client files exist for the person and for the place folder (the page offers to write into them).
  router.get('/client-configs', (req, res) => {
    helpers.localOnly(res);
    const place = helpers.placeOf(req);
    const files = [...userFiles(machine), ...projectFiles(resolve(config.workspaceRoot, place.root), machine).filter((f) => f.serversAt.length === 1)];
    res.json({ clients: CLIENTS.map((client) => ({ client, name: CLIENT_NAMES[client], files: files.filter((f) => f.client === client).map((f) => ({ scope: f.scope, path: f.path })) })) });
  });

  router.post('/client-configs', async (req, res) => {
    helpers.localOnly(res);
    const body = writeBody.parse(req.body);
    const place = helpers.placeOf(req);
    const scope = body.scope ?? 'user';
    const file = (scope === 'user' ? userFiles(machine) : projectFiles(resolve(config.workspaceRoot, place.root), machine)).find((f) => f.client === body.client && f.serversAt.length === 1)!;
    const base = mcpUrlOf(config, host);
    // A token is bound to its place; an OAuth client names the place in the URL (the owner approves it).
    const token =
      body.auth === 'token' ? await services.tokens.create({ name: `${CLIENT_NAMES[body.client]} (written to its configuration)`, ...(place.root && { workspacePath: place.root }) }) : undefined;
    const url = body.auth === 'oauth' && place.root ? `${base}?workspace_path=${encodeURIComponent(place.root)}` : base;
    try {
      const written = await writeServerEntry(file, body.name ?? 'persona-workspace', entryFor(body.client, { url, ...(token && { token: token.token }) }), { replace: body.replace ?? false });
      res.status(201).json({ written, ...(token && { token: { id: token.id, name: token.name } }) });
    } catch (error) {
      // The token goes with the entry that was not written.
      if (token) await services.tokens.revoke(token.id).catch(() => {});
      throw error;
    }
  });

  return router;
}
