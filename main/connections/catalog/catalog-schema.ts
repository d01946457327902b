import { readFileSync } from 'node:fs';
import * as z from 'zod';
import builtinCatalogJson from './builtin-catalog.json' with { type: 'json' };
import { excludedProviderReason } from './excluded-providers.js';

/**
 * Where a catalog entry comes from: the curated file in the repo, the person's own catalog file
 * (WORKSPACE_CATALOG_FILE), or the official MCP Registry.
 */
export type CatalogSource = 'built-in' | 'custom' | 'registry';

export const CATALOG_ID_PATTERN = /^[a-z0-9-]{1,32}$/;

const httpsUrl = z.url({ protocol: /^https$/, error: 'must be an https URL' });
// Own catalogs may list local servers, for development, when private network targets are allowed.
const httpOrHttpsUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });

/** How an API key goes into a request: `<header>: <prefix><key>`. */
const apiKeySchema = z.object({
  header: z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name'),
  prefix: z.string().optional(),
});

const commonFields = {
  id: z.string().regex(CATALOG_ID_PATTERN, 'must be 1-32 characters of a-z, 0-9 and -'),
  name: z.string().trim().min(1).max(100),
  // One line: the page shows it as the row's detail.
  description: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .regex(/^[^\r\n]*$/, 'must be one line'),
  homepage: httpsUrl.optional(),
  docs: httpsUrl.optional(),
};

const entryFields = {
  ...commonFields,
  url: httpsUrl,
  transport: z.enum(['streamable-http', 'sse']),
  auth: z.enum(['oauth', 'api-key', 'none']),
  apiKey: apiKeySchema.optional(),
  signInGroup: z.string().regex(CATALOG_ID_PATTERN).optional(),
  // The provider offers no dynamic client registration: the person brings a client ID and secret.
  needsOwnOAuthApp: z.literal(true).optional(),
};

/**
 * A local server the catalog offers: a package run by its launcher (npx for npm, uvx for PyPI),
 * with the arguments it declares, the variables it reads (the person names a place secret for
 * each), and the hosts it installs from (asked for under strict).
 */
const localEntryFields = {
  ...commonFields,
  transport: z.literal('stdio'),
  auth: z.literal('none'),
  local: z.strictObject({
    command: z.enum(['npx', 'uvx']),
    args: z
      .array(
        z
          .string()
          .max(4000)
          .regex(/^[^\0]*$/, 'no NUL character'),
      )
      .max(100),
    env: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name'),
          description: z.string().max(300).optional(),
          required: z.boolean(),
          secret: z.boolean(),
        }),
      )
      .max(50),
    hosts: z.array(z.string()).max(10).optional(),
  }),
};

const entryOrigin = {
  source: z.enum(['built-in', 'custom', 'registry']),
  // The registry's own server name (`io.github.owner/server`), kept for display and support.
  registryName: z.string().min(1).optional(),
};

/** A catalog entry as the page and the add route see it: a remote server, or a local one. */
export const catalogEntrySchema = z.union([
  z.strictObject({ ...entryFields, ...entryOrigin }).superRefine(checkAuthFields),
  z.strictObject({ ...localEntryFields, ...entryOrigin }),
]);

export type CatalogEntry = z.infer<typeof catalogEntrySchema>;
export type LocalCatalogEntry = Extract<CatalogEntry, { transport: 'stdio' }>;
export type RemoteCatalogEntry = Exclude<CatalogEntry, LocalCatalogEntry>;

/** What makes two entries the same server: a remote's endpoint, a local one's launcher and package. */
export function serverKeyOf(
  entry: Pick<CatalogEntry, 'transport'> & { url?: string; local?: { command: string; args: string[] } },
): string {
  if (entry.transport === 'stdio' && entry.local)
    return `${entry.local.command} ${entry.local.args.find((arg) => !arg.startsWith('-'))?.replace(/(.)@[^@/]*$/, '$1') ?? ''}`;
  return endpointKey(entry.url ?? '');
}

/**
 * Identifies a server endpoint regardless of spelling: host and path, case-insensitive, without
 * query, trailing slash or the trailing `/mcp` or `/sse` (a provider's two transports are one server).
 */
export function endpointKey(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname
      .toLowerCase()
      .replace(/\/+$/, '')
      .replace(/\/(mcp|sse)$/, '');
    return `${parsed.host.toLowerCase()}${path}`;
  } catch {
    return url.toLowerCase();
  }
}

const signInGroupSchema = z.strictObject({
  id: z.string().regex(CATALOG_ID_PATTERN),
  name: z.string().trim().min(1),
  description: z.string().trim().min(1),
});

/** Several servers behind one provider login, shown as service chips ("Connect N services"). */
export type SignInGroup = z.infer<typeof signInGroupSchema>;

function catalogFileSchema(allowHttp: boolean) {
  return z.strictObject({
    version: z.literal(1),
    groups: z.array(signInGroupSchema),
    entries: z
      .array(
        z.union([
          z.strictObject({ ...entryFields, ...(allowHttp && { url: httpOrHttpsUrl }) }).superRefine(checkAuthFields),
          z.strictObject(localEntryFields),
        ]),
      )
      .min(1),
  });
}

export interface BuiltinCatalog {
  entries: CatalogEntry[];
  groups: SignInGroup[];
}

/** A catalog file (built-in or the person's own) is broken; the app must not start with it. */
export class CatalogFileError extends Error {
  override readonly name = 'CatalogFileError';
}

function checkAuthFields(entry: { auth: string; apiKey?: unknown; needsOwnOAuthApp?: true | undefined }, ctx: z.RefinementCtx): void {
  if (entry.auth === 'api-key' && !entry.apiKey) {
    ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'an api-key entry must say which header carries the key' });
  }
  if (entry.auth !== 'api-key' && entry.apiKey) {
    ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'only an api-key entry may have apiKey' });
  }
  if (entry.auth !== 'oauth' && entry.needsOwnOAuthApp) {
    ctx.addIssue({ code: 'custom', path: ['needsOwnOAuthApp'], message: 'only an oauth entry may need an own OAuth app' });
  }
}

/**
 * Validates a catalog file: the schema, then what a schema cannot say (unique ids, groups that
 * exist and group at least two servers, no Google or GitHub). Throws one error listing every
 * problem, so a broken file is fixed in one pass.
 */
export function parseBuiltinCatalog(
  data: unknown,
  source = 'builtin-catalog.json',
  options: { origin?: 'built-in' | 'custom'; allowHttp?: boolean } = {},
): BuiltinCatalog {
  const broken = (problems: string[]) =>
    new CatalogFileError(
      `${source} is not a valid connector catalog: ${problems.join('; ')}. Fix the file; the app cannot start without it.`,
    );
  const parsed = catalogFileSchema(options.allowHttp ?? false).safeParse(data);
  if (!parsed.success) throw broken(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  const { entries, groups } = parsed.data;
  const problems: string[] = [];
  const seenIds = new Set<string>();
  for (const entry of entries) {
    if (seenIds.has(entry.id)) problems.push(`entry id "${entry.id}" is used twice`);
    seenIds.add(entry.id);
    const excluded = excludedProviderReason(entry.transport === 'stdio' ? { id: entry.id, name: entry.name, url: '' } : entry);
    if (excluded) problems.push(`entry "${entry.id}" ${excluded}; Google and GitHub are not offered as connectors`);
  }
  const groupIds = new Set<string>();
  for (const group of groups) {
    if (groupIds.has(group.id)) problems.push(`group id "${group.id}" is used twice`);
    groupIds.add(group.id);
    const members = entries.filter((entry) => groupOf(entry) === group.id).length;
    if (members < 2)
      problems.push(`group "${group.id}" has ${members} entr${members === 1 ? 'y' : 'ies'}; a sign-in group needs at least two`);
  }
  for (const entry of entries) {
    const group = groupOf(entry);
    if (group && !groupIds.has(group)) problems.push(`entry "${entry.id}" names sign-in group "${group}", which is not defined`);
  }
  if (problems.length > 0) throw broken(problems);
  const origin = options.origin ?? 'built-in';
  return { entries: entries.map((entry) => ({ ...entry, source: origin })), groups };
}

/** The sign-in group of a remote entry (a local server signs in to nothing). */
export function groupOf(entry: { transport: string; signInGroup?: string | undefined }): string | undefined {
  return entry.transport === 'stdio' ? undefined : entry.signInGroup;
}

/**
 * The curated catalog shipped with the app, as it is. The file is part of the program: its test
 * (catalog-schema.test.ts) checks it exactly as parseBuiltinCatalog checks an own catalog file,
 * which here would cost tens of milliseconds of schema work on the way to an agent's first tools/list.
 */
export function loadBuiltinCatalog(): BuiltinCatalog {
  const { entries, groups } = builtinCatalogJson as unknown as { entries: Omit<CatalogEntry, 'source'>[]; groups: SignInGroup[] };
  return { entries: entries.map((entry) => ({ ...entry, source: 'built-in' }) as CatalogEntry), groups };
}

/**
 * The curated list: the person's own catalog file first (their organization's servers, say),
 * then the built-in one. An own entry or group may not reuse a built-in id.
 */
export function loadCatalog(own?: { path: string; allowHttp: boolean }): BuiltinCatalog {
  const builtin = loadBuiltinCatalog();
  if (!own) return builtin;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(own.path, 'utf8'));
  } catch (error) {
    const why =
      error instanceof SyntaxError
        ? `it is not JSON (${error.message})`
        : `it cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`;
    throw new CatalogFileError(`WORKSPACE_CATALOG_FILE=${own.path} cannot be used: ${why}. Fix the file or unset the setting.`);
  }
  const mine = parseBuiltinCatalog(data, own.path, { origin: 'custom', allowHttp: own.allowHttp });
  const taken = new Set([...builtin.entries.map((e) => e.id), ...builtin.groups.map((g) => `group ${g.id}`)]);
  const clashes = [...mine.entries.map((e) => e.id), ...mine.groups.map((g) => `group ${g.id}`)].filter((id) => taken.has(id));
  if (clashes.length) {
    throw new CatalogFileError(
      `${own.path} reuses ids of the built-in catalog (${clashes.join(', ')}). Give your entries and groups other ids.`,
    );
  }
  return { entries: [...mine.entries, ...builtin.entries], groups: [...mine.groups, ...builtin.groups] };
}
