import { queryOptions } from '@tanstack/react-query';
import { catalogListing, type CatalogEntry, type CatalogListing, type SignInGroup } from '../../common/api/catalog.js';
import {
  connectAnswer,
  connectionAnswer,
  connectionDetailsAnswer,
  connectManyAnswer,
  installHostsAnswer,
  placeConnectionsAnswer,
  removedAnswer,
  secretNamesAnswer,
  type ConnectionDetails,
  type ConnectionEdit,
  type ConnectionState,
  type ConnectionView as Connection,
  type OwnApp,
  type PlaceConnectionsAnswer as PlaceConnections,
  type LocalServerSpec as AddLocalServer,
  type ServerSpec as AddServer,
} from '../../common/api/connections.js';
import { placePolicyAnswer, placesAnswer, type PlaceForPerson as Place, type PlacePolicy } from '../../common/api/places.js';
import { api, query } from './client';
import { importAnswer, importPlan, type ImportItem, type ImportPlan, type ImportResult } from '../../common/api/client-configs.js';

// Query options and calls per feature: places, a place's connections, the catalog, a place's secrets.
// None polls: the server's change events say what to fetch again (useChanges).

export type {
  AddLocalServer,
  AddServer,
  CatalogEntry,
  ImportItem,
  ImportPlan,
  ImportResult,
  CatalogListing,
  Connection,
  ConnectionDetails,
  ConnectionEdit,
  ConnectionState,
  OwnApp,
  Place,
  PlaceConnections,
  PlacePolicy,
  SignInGroup,
};

export const placesQuery = queryOptions({
  queryKey: ['places'],
  queryFn: () => api('GET', '/places', placesAnswer),
});

export function placeConnectionsQuery(root: string) {
  return queryOptions({
    queryKey: ['place-connections', root],
    queryFn: () => api('GET', `/mcp/place${query({ workspace_path: root })}`, placeConnectionsAnswer),
  });
}

/** The whole catalog, once: the page searches it as the person types, with no round trip per keystroke. */
export const catalogQuery = queryOptions({
  queryKey: ['catalog'],
  queryFn: () => api('GET', '/catalog', catalogListing),
});

export function secretsQuery(root: string) {
  return queryOptions({
    queryKey: ['secrets', root],
    queryFn: () => api('GET', `/secrets${query({ workspace_path: root })}`, secretNamesAnswer),
  });
}

export const refreshCatalog = () => api('POST', '/catalog/refresh', catalogListing);

/** A catalog entry: a remote one's API-key secret, or a local one's variables (VAR → place secret). */
export const addFromCatalog = (root: string, catalog: string, secret?: string, env?: Record<string, string>) =>
  api('POST', '/mcp/place', connectionAnswer, {
    workspace_path: root,
    catalog,
    ...(secret && { secret }),
    ...(env && Object.keys(env).length > 0 && { env }),
  });

export const addServer = (root: string, server: AddServer) => api('POST', '/mcp/place', connectionAnswer, { workspace_path: root, server });

export const addLocalServer = (root: string, local: AddLocalServer) =>
  api('POST', '/mcp/place', connectionAnswer, { workspace_path: root, ...local });

/** The hosts installing a package with this launcher reaches on this machine (its registry's), for the strict policy. */
export function installHostsQuery(command: string) {
  return queryOptions({
    queryKey: ['install-hosts', command],
    queryFn: () => api('GET', `/local-servers/install-hosts${query({ command })}`, installHostsAnswer),
    enabled: command === 'npx' || command === 'uvx',
    staleTime: Infinity,
  });
}

/** What the MCP clients on this machine have that the place could import: read when the panel opens. */
export function importPlanQuery(root: string, enabled: boolean) {
  return queryOptions({
    queryKey: ['import-plan', root],
    queryFn: () => api('GET', `/import${query({ workspace_path: root })}`, importPlan),
    enabled,
  });
}

export const runImport = (root: string, items: string[]) => api('POST', '/import', importAnswer, { workspace_path: root, items });

export const connectConnection = (root: string, name: string, ownApp?: OwnApp) =>
  // The page opens the sign-in page itself (a tab it opened on the click, or the desktop's browser).
  api('POST', `/mcp/place/${encodeURIComponent(name)}/connect${query({ workspace_path: root })}`, connectAnswer, {
    open_browser: false,
    ...(ownApp && { own_app: ownApp }),
  });

/** A sign-in group's "Connect N services": one chain of sign-ins in one browser window. */
export const connectConnections = (root: string, names: string[]) =>
  api('POST', `/mcp/place/connect${query({ workspace_path: root })}`, connectManyAnswer, { names, open_browser: false });

/** A connection's details: its tools (each on or off), last check and last errors. */
export function connectionDetailsQuery(root: string, connection: Connection) {
  return queryOptions({
    queryKey: ['connection-details', root, connection.owner, connection.name],
    queryFn: () =>
      api(
        'GET',
        `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`,
        connectionDetailsAnswer,
      ),
  });
}

/** Fix in place: name, URL, API-key header, or which tools are on. */
export const editConnection = (root: string, connection: Connection, edit: ConnectionEdit) =>
  api(
    'PATCH',
    `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`,
    connectionAnswer,
    edit,
  );

/** Test: the server is asked now, with the connection's credentials. */
export const testConnection = (root: string, connection: Connection) =>
  api(
    'POST',
    `/mcp/place/${encodeURIComponent(connection.name)}/test${query({ workspace_path: root, owner: connection.owner })}`,
    connectionAnswer,
  );

/** Cancel: the check running now ends, on the server too; the connection says so until it is checked again. */
export const cancelCheck = (root: string, connection: Connection) =>
  api(
    'POST',
    `/mcp/place/${encodeURIComponent(connection.name)}/cancel-check${query({ workspace_path: root, owner: connection.owner })}`,
    connectionAnswer,
  );

export const removeConnection = (root: string, connection: Connection) =>
  api(
    'DELETE',
    `/mcp/place/${encodeURIComponent(connection.name)}${query({ workspace_path: root, owner: connection.owner })}`,
    removedAnswer,
  );

/** Saves a place secret; one the place already has is replaced only with `replace` (the person agreed). */
export const putSecret = (root: string, name: string, value: string, replace = false) =>
  api('PUT', `/secrets/${encodeURIComponent(name)}${query({ workspace_path: root })}`, null, { value, ...(replace && { replace }) });

export const putPolicy = (root: string, policy: PlacePolicy['kind'], folders: string[]) =>
  api('PUT', '/places/policy', placePolicyAnswer, { workspace_path: root, policy, folders });
/** What is sealed beyond the credential stores (`seal`), and the stores lifted (`unseal`): both replaced whole. */
export const putSeals = (root: string, seal: string[], unseal: string[]) =>
  api('PUT', '/places/seals', placePolicyAnswer, { workspace_path: root, seal, unseal });
/** The place's own limits, replaced whole: one left out is the machine's default. */
export const putLimits = (root: string, limits: PlacePolicy['limits']) =>
  api('PUT', '/places/limits', placePolicyAnswer, { workspace_path: root, ...limits });
