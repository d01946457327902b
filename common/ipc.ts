import type { HostStatus } from './host-status.js';

/** Every IPC channel between the desktop shell and its page: the arguments and the answer. */
export interface IpcChannels {
  'server:status': { args: []; result: HostStatus };
}

export type IpcChannel = keyof IpcChannels;

/** What the preload exposes to the page as `window.personaDesktop`. */
export interface DesktopApi {
  serverStatus(): Promise<HostStatus>;
}
