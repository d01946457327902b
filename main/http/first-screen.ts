import type * as z from 'zod';
import type { firstScreen } from '../../common/api/first-screen.js';
import { THIS_MACHINE } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { placeConnectionsOf, placesOf } from './api-routes.js';

/**
 * The first screen's data for the owner, as the API answers it: the places and This machine's
 * connections. A connection never checked yet is shown checking rather than holding up the page;
 * its outcome comes as a change event, like any other.
 */
export async function firstScreenOf(services: Services): Promise<z.input<typeof firstScreen>> {
  const [places, connections] = await Promise.all([
    placesOf(services, LOCAL_PERSON),
    placeConnectionsOf(services, LOCAL_PERSON, THIS_MACHINE, { waitMs: 0 }),
  ]);
  return { places, connections };
}
