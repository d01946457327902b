import * as z from 'zod';

// The connector catalog as the API gives it (GET /api/catalog).

export const catalogEntry = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  url: z.string(),
  transport: z.enum(['streamable-http', 'sse']),
  auth: z.enum(['oauth', 'api-key', 'none']),
  apiKey: z.object({ header: z.string(), prefix: z.string().optional() }).optional(),
  signInGroup: z.string().optional(),
  needsOwnOAuthApp: z.literal(true).optional(),
  homepage: z.string().optional(),
  docs: z.string().optional(),
  source: z.enum(['built-in', 'custom', 'registry']),
  registryName: z.string().optional(),
});
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
