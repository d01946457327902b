import { decideToolSearch, type ToolSearchDecision, type ToolSearchMode } from '../../common/tool-search-mode.js';
import type { Place } from '../places/place-root.js';
import type { Services } from '../services.js';
import { machineTools } from './machine-tools.js';
import { PlaceTools } from './place-tools.js';

/** The tools of a place's connections, as its sessions list and call them. */
export function placeTools(services: Services, place: Place): PlaceTools {
  return new PlaceTools(place, {
    connections: services.connections,
    gateway: services.gateway,
    health: services.health,
    catalogDescription: (id) => services.catalog.list().entries.find((entry) => entry.id === id)?.description,
    report: services.log,
  });
}

/** Whether a session in `place` (with the app token `tokenId`, if any) that would list `toolCount` tools gets tool search. */
export async function toolSearchFor(
  services: Services,
  place: Place,
  tokenId: string | undefined,
  toolCount: number,
): Promise<ToolSearchDecision> {
  return decideToolSearch({
    ...(tokenId !== undefined && { token: await services.tokens.toolSearch(tokenId) }),
    place: (await services.access.snapshot()).places[place.root]?.toolSearch ?? 'auto',
    toolCount,
    threshold: services.config.toolSearchThreshold,
  });
}

/**
 * Tool search for a place as the page shows it: the place's setting, how many tools its agents
 * would list now (its connections asked now), and whether that turns tool search on.
 */
export async function placeToolSearch(
  services: Services,
  place: Place,
): Promise<{ mode: ToolSearchMode; toolCount: number; threshold: number } & ToolSearchDecision> {
  // The machine's tools and manage_my_mcp_servers, as every session lists them.
  const fixed = machineTools({ skillsDir: services.config.skillsDir, commands: services.commands }).length + 1;
  const toolCount = fixed + (await placeTools(services, place).tools()).length;
  const decision = await toolSearchFor(services, place, undefined, toolCount);
  const mode = (await services.access.snapshot()).places[place.root]?.toolSearch ?? 'auto';
  return { mode, toolCount, threshold: services.config.toolSearchThreshold, ...decision };
}
