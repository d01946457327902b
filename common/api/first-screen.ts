import * as z from 'zod';
import { placeConnectionsAnswer } from './connections.js';
import { placesAnswer } from './places.js';

/** The id of the `<script type="application/json">` in the index that carries the first screen's data. */
export const FIRST_SCREEN_ID = 'first-screen';

/**
 * What the index carries for the signed-in owner (main/http/page-files.ts), so that the page draws
 * its first screen without waiting for the API: the answers of `GET /api/places` and of
 * `GET /api/mcp/place` for This machine, as the API gives them.
 */
export const firstScreen = z.object({ places: placesAnswer, connections: placeConnectionsAnswer });

/**
 * The host's render of the first screen (renderer/server-render.tsx, built to
 * dist/server-render/first-screen.js): the page's HTML drawn from the carried data's JSON, for `#root`.
 */
export type RenderFirstScreen = (json: string) => string;
