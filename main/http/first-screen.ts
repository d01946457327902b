import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as z from 'zod';
import type { firstScreen, RenderFirstScreen } from '../../common/api/first-screen.js';
import { THIS_MACHINE } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { PACKAGE_ROOT } from '../version.js';
import { placeConnectionsOf, placesOf } from './api-routes.js';

/** What the owner's index carries: the first screen's data as JSON, and the screen drawn from it when it could be. */
export interface FirstScreen {
  json: string;
  /** The page's HTML of the first screen, for `#root`; absent if it could not be drawn here. */
  html?: string;
}

/** The page's render of its first screen for Node, built beside the page (scripts/bundle-server-render.ts). */
const RENDERER = join(PACKAGE_ROOT, 'dist', 'server-render', 'first-screen.js');

/**
 * The first screen for the owner: the places and This machine's connections as the API answers them,
 * and the page's HTML drawn from that very JSON, so the browser paints it before any script runs. A
 * connection never checked yet is shown checking rather than holding up the page; its outcome comes
 * as a change event, like any other. If it cannot be drawn, the data alone: the page draws it.
 */
export async function firstScreenOf(services: Services): Promise<FirstScreen> {
  const [places, connections, render] = await Promise.all([
    placesOf(services, LOCAL_PERSON),
    placeConnectionsOf(services, LOCAL_PERSON, THIS_MACHINE, { waitMs: 0 }),
    renderer(services.log),
  ]);
  const json = JSON.stringify({ places, connections } satisfies z.input<typeof firstScreen>);
  if (!render) return { json };
  try {
    return { json, html: render(json) };
  } catch (error) {
    services.log(`The page's first screen could not be drawn on the server (${messageOf(error)}); the page draws it itself.`);
    return { json };
  }
}

let loaded: Promise<RenderFirstScreen | undefined> | undefined;

/**
 * The render, loaded with the first owner's index, not at the host's start (React DOM's server
 * renderer and the page's components). The file is named at run time, so the CLI's bundle keeps none of it.
 */
function renderer(log: (line: string) => void): Promise<RenderFirstScreen | undefined> {
  loaded ??= (import(pathToFileURL(RENDERER).href) as Promise<{ renderFirstScreen: RenderFirstScreen }>).then(
    (module) => module.renderFirstScreen,
    (error: unknown) => {
      log(
        `The page's first screen is not drawn on the server: its render did not load (${messageOf(error)}). Reinstall the app (in a checkout: npm run build).`,
      );
      return undefined;
    },
  );
  return loaded;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
