import * as z from 'zod';

/** The agent endpoint's state, as the tray, the window and the page show it. */
export const hostStatus = z.discriminatedUnion('state', [
  z.object({ state: z.literal('stopped') }),
  z.object({ state: z.literal('starting') }),
  z.object({ state: z.literal('running'), url: z.string(), auth: z.boolean() }),
  z.object({ state: z.literal('stopping') }),
  z.object({ state: z.literal('failed'), error: z.string() }),
]);
export type HostStatus = z.infer<typeof hostStatus>;
