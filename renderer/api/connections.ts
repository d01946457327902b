import { queryOptions } from '@tanstack/react-query';
import { api, query } from './client';
import type { AddLocalServer, AddServer, CatalogListing, Connection, ConnectionDetails, ConnectionEdit, ConnectResult, ImportPlan, ImportResult, OwnApp, Place, PlaceConnections, PlacePolicy } from './types';

// Query options and calls per feature: places, a place's connections, the catalog, a place's secrets.

export const placesQuery = queryOptions({
  queryKey: ['places'],
  queryFn: () => api<{ places: Place[]; truncated: boolean }>('GET', '/places'),
});

export function placeConnectionsQuery(root: string, options: { polling: boolean }) {
  return queryOptions({
    queryKey: ['place-connections', root],
    queryFn: () => api<PlaceConnections>('GET', `/mcp/place${query({ workspace_path: root })}`),
    refetchOnWindowFocus: 'always',
    // While a sign-in is open in the browser, the list follows it closely, so a denied or failed one shows
    // within a second; while a server is being asked, it updates by itself when the check ends; and
    // otherwise what it shows is at most 10 s old (a login the provider ended, a server gone down).
    refetchInterval: (q) => {
      const list = q.state.data?.connections ?? [];
      if (options.polling || list.some((c) => c.signIn?.state === 'pending')) return 500;
      return list.some((c) => c.state === 'checking') ? 1500 : 10_000;
    },
  });
}

/** The whole catalog, once: the page searches it as the person types, with no round trip per keystroke. */
export const catalogQuery = queryOptions({
  queryKey: ['catalog'],
  queryFn: () => api<CatalogListing>('GET', '/catalog'),
  // The registry fills in the background: look again while it is loading.
  refetchInterval: (q) => (q.state.data?.registry.state === 'loading' ? 2000 : false),
});

export function secretsQuery(root: string) {
  return queryOptions({
    queryKey: ['secrets', root],
    queryFn: () => api<{ names: string[] }>('GET', `/secrets${query({ workspace_path: root })}`),
  });
}

export const refreshCatalog = () => api<CatalogListing>('POST', '/catalog/refresh');

/** A catalog entry: a remote one's API-key secret, or a local one's variables (VAR → place secret). */
export const addFromCatalog = (root: string, catalog: string, secret?: string, env?: Record<string, string>) =>
  api<{ connection: Connection }>('POST', '/mcp/place', { workspace_path: root, catalog, ...(secret && { secret }), ...(env && Object.keys(env).length > 0 && { env }) });

export const addServer = (root: string, server: AddServer) => api<{ connection: Connection }>('POST', '/mcp/place', { workspace_path: root, server });

export const addLocalServer = (root: string, local: AddLocalServer) => api<{ connection: Connection }>('POST', '/mcp/place', { workspace_path: root, ...local });

/** The hosts installing a package with this launcher reaches on this machine (its registry's), for the strict policy. */
export function installHostsQuery(command: string) {
  return queryOptions({
    queryKey: ['install-hosts', command],
    queryFn: () => api<{ hosts: string[] }>('GET', `/local-servers/install-hosts${query({ command })}`),
    enabled: command === 'npx' || command === 'uvx',
    staleTime: Infinity,
  });
}

/** What the MCP clients on this machine have that the place could import: read when the panel opens. */
export function importPlanQuery(root: string, enabled: boolean) {
  return queryOptions({
    queryKey: ['import-plan', root],
    queryFn: () => api<ImportPlan>('GET', `/import${query({ workspace_path: root })}`),
    enabled,
  });
}

export const runImport = (root: string, items: string[]) => api<{ results: ImportResult[] }>('POST', '/import', { workspace_path: root, items });

export const connectConnection = (root: string, name: string, ownApp?: OwnApp) =>
  // The page opens the sign-in page itself (a tab it opened on the click, or the desktop's browser).
  api<ConnectResult>('POST', `/mcp/place/${encodeURIComponent(name)}/connect${query({ workspace_path: root })}`, { open_browser: false, ...(ownApp && { own_app: ownApp }) });

/** A sign-in group's "Connect N services": one chain of sign-ins in one browser window. */
export const connectConnections = (root: string, names: string[]) =>
  api<{ connections: Connection[]; signIns: { name: string; authorizationUrl: string }[]; authorizationUrl?: string }>('POST', `/mcp/place/connect${query({ workspace_path: root })}`, { names, open_browser: false });

/** A connection's details: its tools (each on or off), last check and last errors. */
export function connectionDetailsQuery(root: string, connection: Connection) {
  return queryOptions({
    queryKey: ['connection-details', root, connection.owner, connection.name],
    queryFn: () => api<{ connection: ConnectionDetails }>('GET', `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`),
  });
}

/** Fix in place: name, URL, API-key header, or which tools are on. */
export const editConnection = (root: string, connection: Connection, edit: ConnectionEdit) =>
  api<{ connection: Connection }>('PATCH', `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`, edit);

/** Test: the server is asked now, with the connection's credentials. */
export const testConnection = (root: string, connection: Connection) =>
  api<{ connection: Connection }>('POST', `/mcp/place/${encodeURIComponent(connection.name)}/test${query({ workspace_path: root, owner: connection.owner })}`);

export const removeConnection = (root: string, connection: Connection) =>
  api<{ removed: boolean }>('DELETE', `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`);

/** Saves a place secret; one the place already has is replaced only with `replace` (the person agreed). */
export const putSecret = (root: string, name: string, value: string, replace = false) =>
  api<void>('PUT', `/secrets/${encodeURIComponent(name)}${query({ workspace_path: root })}`, { value, ...(replace && { replace }) });

export const putPolicy = (root: string, policy: PlacePolicy['kind'], folders: string[]) =>
  api<{ policy: PlacePolicy }>('PUT', '/places/policy', { workspace_path: root, policy, folders });
/** What is sealed beyond the credential stores (`seal`), and the stores lifted (`unseal`): both replaced whole. */
export const putSeals = (root: string, seal: string[], unseal: string[]) => api<{ policy: PlacePolicy }>('PUT', '/places/seals', { workspace_path: root, seal, unseal });
/** The place's own limits, replaced whole: one left out is the machine's default. */
export const putLimits = (root: string, limits: PlacePolicy['limits']) => api<{ policy: PlacePolicy }>('PUT', '/places/limits', { workspace_path: root, ...limits });
