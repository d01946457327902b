import type { QueryClient } from '@tanstack/react-query';
import { FIRST_SCREEN_ID, firstScreen } from '../../common/api/first-screen.js';
import { placeConnectionsQuery, placesQuery } from '../api/connections';
import { readPlace } from './remembered-place';
import { sectionOf } from './sections';

/**
 * Gets what the first screen shows before React draws it: the answers the index carries for the
 * signed-in owner (checked against the API's schemas), and the rest asked for at once, in parallel,
 * rather than each when the part that shows it is drawn.
 */
export function startFirstScreen(client: QueryClient): void {
  const carried = carriedByIndex();
  if (carried) {
    client.setQueryData(placesQuery.queryKey, carried.places);
    client.setQueryData(placeConnectionsQuery(carried.connections.place.root).queryKey, carried.connections);
  } else {
    void client.prefetchQuery(placesQuery);
  }
  // The picker opens on the place it showed last, which only this browser knows.
  const root = readPlace();
  if (sectionOf(window.location.hash) === 'connections' && !client.getQueryData(placeConnectionsQuery(root).queryKey)) {
    void client.prefetchQuery(placeConnectionsQuery(root));
  }
}

function carriedByIndex() {
  const text = document.getElementById(FIRST_SCREEN_ID)?.textContent;
  if (!text) return undefined;
  try {
    // Data of another shape (a page and server of different versions) is not used: the API is asked instead.
    return firstScreen.safeParse(JSON.parse(text)).data;
  } catch {
    return undefined;
  }
}
