/** The agent endpoint's state, as the tray, the window and the page show it. */
export type HostStatus =
  | { state: 'stopped' }
  | { state: 'starting' }
  | { state: 'running'; url: string; auth: boolean }
  | { state: 'stopping' }
  | { state: 'failed'; error: string };
