import { resolve } from 'node:path';
import { Router, type Request, type Response } from 'express';
import type * as z from 'zod';
import {
  clientFilesAnswer,
  importAnswer,
  importBody,
  importPlan,
  writeClientBody,
  writtenClientEntry,
} from '../../common/api/client-configs.js';
import { CLIENT_NAMES, CLIENTS, machineOf, projectFiles, userFiles } from '../connections/client-configs/client-files.js';
import { connectClient, DEFAULT_ENTRY_NAME, entryFileOf } from '../connections/client-configs/client-entry.js';
import { ClientImport } from '../connections/client-configs/client-import.js';
import type { Place } from '../places/place-root.js';
import type { Services } from '../services.js';
import type { HostControl } from './control-plane.js';
import { mcpUrlOf } from './mcp-urls.js';

/**
 * Import from the MCP clients on this machine (what would be added, then the chosen ones), and
 * this server's entry written into a client's configuration. The owner's only: these are the
 * person's own files.
 */
export function clientConfigRoutes(
  services: Services,
  host: HostControl,
  helpers: { person: (res: Response) => string; placeOf: (req: Request) => Place; localOnly: (res: Response) => void },
): Router {
  const { config } = services;
  const router = Router();
  const machine = machineOf(services.env);
  const importer = new ClientImport({
    connections: services.connections,
    workspaceRoot: config.workspaceRoot,
    machine,
    allowPrivateNetwork: config.allowPrivateNetwork,
  });

  router.get('/import', async (req, res) => {
    helpers.localOnly(res);
    res.json((await importer.plan(helpers.person(res), helpers.placeOf(req))) satisfies z.input<typeof importPlan>);
  });

  router.post('/import', async (req, res) => {
    helpers.localOnly(res);
    const body = importBody.parse(req.body);
    const place = helpers.placeOf(req);
    const results = await importer.run(helpers.person(res), place, body.items);
    services.placeSessions.toolsChanged([place.root]);
    res.json({ results } satisfies z.input<typeof importAnswer>);
  });

  // Which client files exist for the person and for the place folder (the page offers to write into them).
  router.get('/client-configs', (req, res) => {
    helpers.localOnly(res);
    const place = helpers.placeOf(req);
    const files = [...userFiles(machine), ...projectFiles(resolve(config.workspaceRoot, place.root), machine)].filter((f) => f.writable);
    res.json({
      clients: CLIENTS.map((client) => ({
        client,
        name: CLIENT_NAMES[client],
        files: files.filter((f) => f.client === client).map((f) => ({ scope: f.scope, path: f.path })),
      })),
    } satisfies z.input<typeof clientFilesAnswer>);
  });

  router.post('/client-configs', async (req, res) => {
    helpers.localOnly(res);
    const body = writeClientBody.parse(req.body);
    const place = helpers.placeOf(req);
    const file = entryFileOf(body.client, body.scope ?? 'user', resolve(config.workspaceRoot, place.root), machine);
    const answer = await connectClient({
      client: body.client,
      file,
      url: mcpUrlOf(config, host),
      placeRoot: place.root,
      auth: body.auth,
      name: body.name ?? DEFAULT_ENTRY_NAME,
      replace: body.replace ?? false,
      tokens: services.tokens,
    });
    res.status(201).json(answer satisfies z.input<typeof writtenClientEntry>);
  });

  return router;
}
