import { app } from 'electron';
import { applyWorkingDirectory, loadConfig } from '../config.js';
import { Host } from '../host.js';

// The desktop shell: one instance per user, the host started at launch and stopped cleanly on
// quit. The tray, the window and the IPC handlers behind preload/ come with the page.

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  applyWorkingDirectory();
  // Server-owned state lives in the app's userData folder unless WORKSPACE_STATE_DIR says otherwise.
  const host = new Host(loadConfig({}, { ...process.env, WORKSPACE_STATE_DIR: process.env.WORKSPACE_STATE_DIR ?? app.getPath('userData') }));

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
