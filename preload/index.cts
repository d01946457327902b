// The window's preload. It is CommonJS (.cts, built to index.cjs) because a sandboxed preload runs
// as a function body with only `require`, `exports` and `module`: no ES module syntax, and nothing
// but Electron's own modules to require. Hence the type-only import below.
import { contextBridge, ipcRenderer } from 'electron';
import type { DesktopApi, IpcChannel, IpcChannels } from '../common/ipc.js';

function invoke<C extends IpcChannel>(channel: C, ...args: IpcChannels[C]['args']): Promise<IpcChannels[C]['result']> {
  return ipcRenderer.invoke(channel, ...args) as Promise<IpcChannels[C]['result']>;
}

// Exactly the DesktopApi, each method a wrapper: the page never gets ipcRenderer itself.
const api: DesktopApi = {
  config: () => invoke('app:config'),
  openExternal: (url) => invoke('app:open-external', url),
  launchAtLogin: (enabled?: boolean) => (enabled === undefined ? invoke('app:launch-at-login') : invoke('app:launch-at-login', enabled)),
  openSkillFolder: (name) => invoke('skills:open-folder', name),
  quit: () => invoke('app:quit'),
};

contextBridge.exposeInMainWorld('personaDesktop', api);
