import * as z from 'zod';

/**
 * The parts of the MCP Registry's list response (`GET /v0.1/servers`, OpenAPI 2025-12-01) that the
 * catalog reads. Loose on purpose: the registry adds fields over time, and one odd server must not
 * cost the whole page, so items are checked one by one (`parseServerItem`).
 */

const headerSchema = z.looseObject({
  name: z.string().min(1),
  value: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
});

const remoteSchema = z.looseObject({
  type: z.string(),
  url: z.string(),
  headers: z.array(headerSchema).optional(),
});

export type RegistryRemote = z.infer<typeof remoteSchema>;

/** An argument a package declares (positional, or named like `--port`), with a fixed value or not. */
const argumentSchema = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  value: z.string().optional(),
  default: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
});

const variableSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
});

/** A package of a local server (npm, PyPI, ...), run over stdio. */
const packageSchema = z.looseObject({
  registryType: z.string(),
  registryBaseUrl: z.string().optional(),
  identifier: z.string().min(1),
  version: z.string().optional(),
  transport: z.looseObject({ type: z.string() }).optional(),
  runtimeArguments: z.array(argumentSchema).optional(),
  packageArguments: z.array(argumentSchema).optional(),
  environmentVariables: z.array(variableSchema).optional(),
});

export type RegistryPackage = z.infer<typeof packageSchema>;
export type RegistryArgument = z.infer<typeof argumentSchema>;
export type RegistryHeader = z.infer<typeof headerSchema>;

const serverSchema = z.looseObject({
  name: z.string().min(1),
  version: z.string().min(1),
  title: z.string().optional(),
  description: z.string().optional(),
  websiteUrl: z.string().optional(),
  // Each remote and package is checked on its own: a malformed one is skipped, the others still count.
  remotes: z.array(z.unknown()).optional(),
  packages: z.array(z.unknown()).optional(),
});

const officialMetaSchema = z.looseObject({
  status: z.string().optional(),
  publishedAt: z.string().optional(),
  isLatest: z.boolean().optional(),
});

const serverItemSchema = z.looseObject({
  server: serverSchema,
  _meta: z.looseObject({ 'io.modelcontextprotocol.registry/official': officialMetaSchema.optional() }).optional(),
});

export interface RegistryServerItem {
  name: string;
  version: string;
  title?: string | undefined;
  description?: string | undefined;
  websiteUrl?: string | undefined;
  remotes: RegistryRemote[];
  packages: RegistryPackage[];
  status?: string | undefined;
  publishedAt?: string | undefined;
  isLatest?: boolean | undefined;
}

const pageSchema = z.looseObject({
  servers: z.array(z.unknown()),
  // `nextCursor` is the current name; the MCP Registry API's first published spec called it `next_cursor`.
  metadata: z.looseObject({ nextCursor: z.string().nullish(), next_cursor: z.string().nullish() }).nullish(),
});

export interface RegistryPage {
  items: unknown[];
  nextCursor?: string | undefined;
}

/** The page's items and next cursor, or a reason why this is not a registry list response. */
export function parseRegistryPage(data: unknown): RegistryPage | { problem: string } {
  const parsed = pageSchema.safeParse(data);
  if (!parsed.success) return { problem: 'expected an object with a "servers" array' };
  const nextCursor = parsed.data.metadata?.nextCursor || parsed.data.metadata?.next_cursor || undefined;
  return { items: parsed.data.servers, nextCursor };
}

/** One server of a page, or `undefined` when it lacks what the catalog needs. */
export function parseServerItem(data: unknown): RegistryServerItem | undefined {
  const parsed = serverItemSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const { server, _meta } = parsed.data;
  const official = _meta?.['io.modelcontextprotocol.registry/official'];
  const remotes = (server.remotes ?? []).flatMap((remote) => {
    const result = remoteSchema.safeParse(remote);
    return result.success ? [result.data] : [];
  });
  const packages = (server.packages ?? []).flatMap((pkg) => {
    const result = packageSchema.safeParse(pkg);
    return result.success ? [result.data] : [];
  });
  return {
    name: server.name,
    version: server.version,
    title: server.title,
    description: server.description,
    websiteUrl: server.websiteUrl,
    remotes,
    packages,
    status: official?.status,
    publishedAt: official?.publishedAt,
    isLatest: official?.isLatest,
  };
}
