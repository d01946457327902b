import { contextBridge, ipcRenderer } from 'electron';
import type { DesktopApi, IpcChannel, IpcChannels } from '../common/ipc.js';

// Type-only imports: a sandboxed preload can load nothing but Electron's own modules.
function invoke<C extends IpcChannel>(channel: C, ...args: IpcChannels[C]['args']): Promise<IpcChannels[C]['result']> {
  return ipcRenderer.invoke(channel, ...args) as Promise<IpcChannels[C]['result']>;
}

const api: DesktopApi = {
  serverStatus: () => invoke('server:status'),
};

contextBridge.exposeInMainWorld('personaDesktop', api);
