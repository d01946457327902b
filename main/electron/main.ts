import { app, BrowserWindow, ipcMain, type IpcMainInvokeEvent } from 'electron';
import type { IpcChannel, IpcChannels } from '../../common/ipc.js';
import { applyWorkingDirectory, loadConfig } from '../config.js';
import { Host } from '../host.js';

// The desktop shell: one instance per user, the host started at launch and stopped cleanly on
// quit. The tray and the window come with the page.

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  applyWorkingDirectory();
  // Server-owned state lives in the app's userData folder unless WORKSPACE_STATE_DIR says otherwise.
  const host = new Host(loadConfig({}, { ...process.env, WORKSPACE_STATE_DIR: process.env.WORKSPACE_STATE_DIR ?? app.getPath('userData') }));

  handle('server:status', () => host.status);

  app.on('window-all-closed', () => {
    // Keep serving agents with no window open.
  });

  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    event.preventDefault();
    quitting = true;
    host.stop().finally(() => app.quit());
  });

  app.whenReady()
    .then(() => host.start())
    .catch((error: unknown) => console.error(`Persona Workspace could not start its server: ${(error as Error).message}`));
}

/** Answers an IPC channel of the preload, only for the top frame of one of the app's own windows. */
function handle<C extends IpcChannel>(channel: C, answer: (...args: IpcChannels[C]['args']) => IpcChannels[C]['result'] | Promise<IpcChannels[C]['result']>): void {
  ipcMain.handle(channel, (event: IpcMainInvokeEvent, ...args: unknown[]) => {
    const fromOwnWindow = event.senderFrame !== null && event.senderFrame === event.sender.mainFrame && BrowserWindow.fromWebContents(event.sender) !== null;
    if (!fromOwnWindow) throw new Error(`${channel} is only available to the app's own window.`);
    return answer(...(args as IpcChannels[C]['args']));
  });
}
