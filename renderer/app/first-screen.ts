import type { QueryClient } from '@tanstack/react-query';
import type * as z from 'zod';
import { FIRST_SCREEN_ID, firstScreen } from '../../common/api/first-screen.js';
import { placeConnectionsQuery, placesQuery } from '../api/connections';
import { placeAtLoad } from './remembered-place';
import { sectionOf } from './sections';

/**
 * Gets what the first screen shows before React draws it: the answers the index carries for the
 * signed-in owner (checked against the API's schemas), and the rest asked for at once, in parallel,
 * rather than each when the part that shows it is drawn. True if the index carried them.
 */
export function startFirstScreen(client: QueryClient): boolean {
  const carried = firstScreenIn(document.getElementById(FIRST_SCREEN_ID)?.textContent);
  if (carried) fillFirstScreen(client, carried);
  else void client.prefetchQuery(placesQuery);
  // The picker opens on the place it showed last, which only this browser knows.
  const root = placeAtLoad();
  if (sectionOf(window.location.hash) === 'connections' && !client.getQueryData(placeConnectionsQuery(root).queryKey)) {
    void client.prefetchQuery(placeConnectionsQuery(root));
  }
  return carried !== undefined;
}

/** The carried data's JSON, checked; undefined if absent or of another shape (a page and server of different versions: the API is asked instead). */
export function firstScreenIn(text: string | null | undefined): z.infer<typeof firstScreen> | undefined {
  if (!text) return undefined;
  try {
    return firstScreen.safeParse(JSON.parse(text)).data;
  } catch {
    return undefined;
  }
}

/** The carried answers as the queries' data, as if the API had just given them. */
export function fillFirstScreen(client: QueryClient, carried: z.infer<typeof firstScreen>): void {
  client.setQueryData(placesQuery.queryKey, carried.places);
  client.setQueryData(placeConnectionsQuery(carried.connections.place.root).queryKey, carried.connections);
}
