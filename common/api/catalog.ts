import * as z from 'zod';

// The connector catalog as the API gives it (GET /api/catalog).

const commonFields = {
  id: z.string(),
  name: z.string(),
  description: z.string(),
  homepage: z.string().optional(),
  docs: z.string().optional(),
  source: z.enum(['built-in', 'custom', 'registry']),
  /** The registry's own server name (`io.github.owner/server`). */
  registryName: z.string().optional(),
};

/** A remote server the catalog offers. */
export const remoteCatalogEntry = z.object({
  ...commonFields,
  url: z.string(),
  transport: z.enum(['streamable-http', 'sse']),
  auth: z.enum(['oauth', 'api-key', 'none']),
  apiKey: z.object({ header: z.string(), prefix: z.string().optional() }).optional(),
  signInGroup: z.string().optional(),
  /** The provider offers no dynamic client registration: the person brings a client ID and secret. */
  needsOwnOAuthApp: z.literal(true).optional(),
});

/** A local server the catalog offers: a package run by its launcher, the variables it reads (each from a place secret), the hosts it installs from. */
export const localCatalogEntry = z.object({
  ...commonFields,
  transport: z.literal('stdio'),
  auth: z.literal('none'),
  local: z.object({
    command: z.enum(['npx', 'uvx']),
    args: z.array(z.string()),
    env: z.array(z.object({ name: z.string(), description: z.string().optional(), required: z.boolean(), secret: z.boolean() })),
    hosts: z.array(z.string()).optional(),
  }),
});

export const catalogEntry = z.union([remoteCatalogEntry, localCatalogEntry]);
export type CatalogEntry = z.infer<typeof catalogEntry>;

/** Several servers behind one provider login, shown as service chips ("Connect N services"). */
export const signInGroup = z.object({ id: z.string(), name: z.string(), description: z.string() });
export type SignInGroup = z.infer<typeof signInGroup>;

export const catalogListing = z.object({
  /** Built-in entries first, then registry entries (or by rank when searching). */
  entries: z.array(catalogEntry),
  /** The sign-in groups that the listed entries use. */
  groups: z.array(signInGroup),
  registry: z.object({
    state: z.enum(['ok', 'loading', 'failed', 'disabled']),
    /** When the registry entries shown were fetched. */
    fetchedAt: z.string().optional(),
    ageSeconds: z.number().optional(),
    /** Set when the last fetch failed: what happened and what to do. */
    error: z.string().optional(),
  }),
});
export type CatalogListing = z.infer<typeof catalogListing>;
