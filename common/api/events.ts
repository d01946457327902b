import * as z from 'zod';

/**
 * What changed, as `GET /api/events` tells the page and the host tells the tray: a topic, and for a
 * place's connections or secrets the place's root (absent: every place). The page fetches again
 * just the answers of that topic.
 */
export const change = z.discriminatedUnion('topic', [
  /** A place's connections: added, removed, edited, checked, signed in or out. */
  z.object({ topic: z.literal('connections'), root: z.string().optional() }),
  /** A place's secret names. */
  z.object({ topic: z.literal('secrets'), root: z.string().optional() }),
  /** The places and their access: policies, network, tool search, people. */
  z.object({ topic: z.literal('places') }),
  z.object({ topic: z.literal('catalog') }),
  z.object({ topic: z.literal('skills') }),
  /** Agent sign-ins waiting for the owner. */
  z.object({ topic: z.literal('sign-ins') }),
  /** Clients signed in with OAuth. */
  z.object({ topic: z.literal('clients') }),
  z.object({ topic: z.literal('tokens') }),
  /** The agent endpoint: started, stopped, its running commands. */
  z.object({ topic: z.literal('server') }),
  /** A tool call was recorded. */
  z.object({ topic: z.literal('activity') }),
]);
export type Change = z.infer<typeof change>;
export type Topic = Change['topic'];

/** The server-sent event's name for a change. */
export const CHANGE_EVENT = 'change';
