import * as z from 'zod';
import { connectionView, transport } from './connections.js';
import { place } from './places.js';
import { CLIENTS } from '../client-ids.js';

// The MCP clients' configurations as the API gives and takes them: import from them (GET and POST
// /api/import), and this server's entry written into one (GET and POST /api/client-configs).

export { CLIENTS };
export const clientId = z.enum(CLIENTS);
export type ClientId = z.infer<typeof clientId>;

/** `user`: the person's own file, for every project; `project`: a folder's (here, a place's). */
const scope = z.enum(['user', 'project']);

/** One server of a client's configuration as it would be added to the place: never a secret value. */
export const importItem = z.object({
  id: z.string(),
  client: clientId,
  clientName: z.string(),
  scope,
  file: z.string(),
  name: z.string(),
  kind: z.enum(['remote', 'local']),
  /** What would be added: a remote server (URL, and the header its key goes in), or a local one (its command). */
  adds: z
    .union([
      z.object({
        url: z.string(),
        transport,
        header: z.object({ name: z.string(), prefix: z.string().optional(), secret: z.string() }).optional(),
      }),
      z.object({ commandLine: z.string(), env: z.record(z.string(), z.string()), hosts: z.array(z.string()) }),
    ])
    .optional(),
  /** The place secrets it would create, each with where its value comes from (a variable, a header). */
  secrets: z.array(z.object({ name: z.string(), from: z.string() })),
  /** Why it cannot be imported as it is. */
  problem: z.string().optional(),
  /** What is left out (other headers). */
  notes: z.array(z.string()),
});
export type ImportItem = z.infer<typeof importItem>;

/** GET /api/import: what the clients on this machine have, the files that could not be read, every file looked at. */
export const importPlan = z.object({
  place,
  items: z.array(importItem),
  problems: z.array(z.object({ client: clientId, file: z.string(), problem: z.string() })),
  files: z.array(z.object({ client: clientId, scope, path: z.string(), found: z.boolean() })),
});
export type ImportPlan = z.infer<typeof importPlan>;

/** POST /api/import: the items chosen, by id. */
export const importBody = z.object({ workspace_path: z.string().optional(), items: z.array(z.string().max(64)).min(1).max(200) }).strict();
export const importResult = z.object({ id: z.string(), name: z.string(), added: connectionView.optional(), error: z.string().optional() });
export type ImportResult = z.infer<typeof importResult>;
export const importAnswer = z.object({ results: z.array(importResult) });

/** GET /api/client-configs: where each client's entry for this server would go. */
export const clientFilesAnswer = z.object({
  clients: z.array(z.object({ client: clientId, name: z.string(), files: z.array(z.object({ scope, path: z.string() })) })),
});
export type ClientFiles = z.infer<typeof clientFilesAnswer>;

/** POST /api/client-configs */
export const writeClientBody = z
  .object({
    workspace_path: z.string().optional(),
    client: clientId,
    /** `token`: a new token of this app goes in the entry; `oauth`: the URL only, the client signs in. */
    auth: z.enum(['token', 'oauth']),
    /** `project`: the place folder's own file rather than the person's. */
    scope: scope.optional(),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . and -')
      .optional(),
    replace: z.boolean().optional(),
  })
  .strict();

/** What was written: the file, the entry (its token shown as a placeholder), the backup beside it, and the token made for it. */
export const writtenClientEntry = z.object({
  written: z.object({
    client: clientId,
    clientName: z.string(),
    file: z.string(),
    name: z.string(),
    entry: z.unknown(),
    backup: z.string().optional(),
    created: z.boolean(),
    replaced: z.boolean(),
  }),
  token: z.object({ id: z.string(), name: z.string() }).optional(),
});
export type WrittenClientEntry = z.infer<typeof writtenClientEntry>;
