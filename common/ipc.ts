/**
 * Every IPC channel between the desktop shell and its page: the arguments and the answer. IPC
 * carries only what a browser can't do; everything else goes over the control plane's HTTP API,
 * the same in the window and in a browser.
 */
export interface IpcChannels {
  /** Where the page calls the API, and the credential it sends as `Authorization: Bearer`. */
  'app:config': { args: []; result: DesktopConfig };
  /** Opens a sign-in URL the host produced in the system browser; any other URL is refused. */
  'app:open-external': { args: [url: string]; result: void };
  /** Reads launch-at-login, or sets it when given a value; answers the state now in effect. */
  'app:launch-at-login': { args: [] | [enabled: boolean]; result: boolean };
  /** Opens a skill's folder in the system's file manager; the name must be a folder directly inside the skills folder. */
  'skills:open-folder': { args: [name: string]; result: void };
  /** Quits the app: the host stops cleanly first. */
  'app:quit': { args: []; result: void };
}

export type IpcChannel = keyof IpcChannels;

export interface DesktopConfig {
  apiBase: string;
  adminToken: string;
}

/** What the preload exposes to the page as `window.personaDesktop`, and nothing more. */
export interface DesktopApi {
  config(): Promise<DesktopConfig>;
  openExternal(url: string): Promise<void>;
  launchAtLogin(enabled?: boolean): Promise<boolean>;
  openSkillFolder(name: string): Promise<void>;
  quit(): Promise<void>;
}
