import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  app,
  BrowserWindow,
  clipboard,
  dialog,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  session,
  shell,
  Tray,
  type IpcMainInvokeEvent,
  type MenuItemConstructorOptions,
  type NativeImage,
} from 'electron';
import type { IpcChannel, IpcChannels } from '../../common/ipc.js';
import { applyWorkingDirectory, loadConfig } from '../config.js';
import { Host } from '../host.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import { skillFolderPath } from '../machine/skill-folder.js';
import { autostartPath, HIDDEN_ARG, LinuxAutostart } from './autostart.js';
import { checkArgs, senderAllowed, type IpcSender } from './ipc-checks.js';
import { permissionAllowed } from './permissions.js';
import { loadSettings, SETTINGS_FILE, userDataDirFromArgs } from './settings.js';
import { TRAY_HINT, TrayHint } from './tray-hint.js';
import { trayIconPng } from './tray-icon.js';
import type { UpstreamSignInNeeded } from '../connections/sign-ins-needed.js';
import { trayMenuModel, type TrayAction, type TrayItem } from './tray-menu.js';
import { trayClickAction, trayIconName, trayState, trayTooltip, type TrayIconName } from './tray-state.js';
import { answerOf, PromptedSignIns, signInDialog } from './agent-sign-in-prompt.js';
import { navigationDecision, originOf, SignInUrls, windowOptions } from './window.js';

// The desktop shell, thin glue over the pure modules beside it: one instance per user; the control
// plane (the page) up while the app runs and the agent endpoint started at launch unless the settings
// say otherwise; the window hides to the tray when closed; Quit stops the host cleanly.

const PRELOAD = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'preload', 'index.cjs');

const signInUrls = new SignInUrls();
let host: Host | undefined;
let controlUrl: string | undefined;
let window: BrowserWindow | undefined;
let tray: Tray | undefined;
let trayIcon: TrayIconName | undefined;
let trayHint: TrayHint | undefined;
// The connections waiting for the person at the machine to sign in: the tray's attention state.
let upstreamSignIns: UpstreamSignInNeeded[] = [];
let launchAtLogin = false;
// A second launch or the tray may ask for the window before the host's page is up.
let windowWanted = !process.argv.includes(HIDDEN_ARG);
let quitting = false;
let hostClosed = false;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// Before the single-instance lock, which lives in the userData folder.
const userDataDir = userDataDirFromArgs(process.argv);
if (userDataDir) app.setPath('userData', userDataDir);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => showWindow());
  // macOS: a click on the Dock icon. It also fires as the app starts, so it counts only once the
  // page is up: a start at login stays in the tray.
  app.on('activate', (_event, hasVisibleWindows) => {
    if (controlUrl && !hasVisibleWindows) showWindow();
  });
  // The app lives in the tray: no window open is its normal state.
  app.on('window-all-closed', () => {});
  app.on('before-quit', (event) => {
    if (hostClosed) return;
    event.preventDefault();
    if (quitting) return;
    quitting = true;
    (host?.close() ?? Promise.resolve())
      .catch((error: unknown) => log(`Persona Workspace: stopping the server failed: ${(error as Error).message}`))
      .finally(() => {
        hostClosed = true;
        app.quit();
      });
  });
  // A service manager or a terminal stops the app like its Quit does, not by killing the host mid-write.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event) => {
      if (guardNavigation(event.url, false) !== 'allow') event.preventDefault();
    });
    contents.on('will-redirect', (event) => {
      if (guardNavigation(event.url, false) !== 'allow') event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      guardNavigation(url, true);
      return { action: 'deny' };
    });
  });

  app
    .whenReady()
    .then(launch)
    .catch((error: unknown) => {
      dialog.showErrorBox('Persona Workspace cannot start', (error as Error).message);
      app.quit();
    });
}

async function launch(): Promise<void> {
  if (process.platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin) windowWanted = false;
  // The page's Copy buttons (navigator.clipboard.writeText) and nothing else, for the app's own page only.
  const pageOrigin = () => (controlUrl ? originOf(controlUrl) : undefined);
  session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) => {
    callback(permissionAllowed({ permission, requesting: details.requestingUrl, isMainFrame: details.isMainFrame }, pageOrigin()));
  });
  session.defaultSession.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) =>
    permissionAllowed(
      {
        permission,
        requesting: requestingOrigin,
        isMainFrame: details.isMainFrame,
        ...(details.embeddingOrigin !== undefined && { embeddingOrigin: details.embeddingOrigin }),
      },
      pageOrigin(),
    ),
  );
  Menu.setApplicationMenu(Menu.buildFromTemplate(appMenu()));

  const loaded = loadSettings(app.getPath('userData'));
  trayHint = new TrayHint(join(app.getPath('userData'), SETTINGS_FILE));
  const { settings, problem } = loaded;
  if (problem) log(`Persona Workspace: ${problem}`);
  const env = { ...loaded.env, WORKSPACE_STATE_DIR: loaded.env.WORKSPACE_STATE_DIR ?? app.getPath('userData') };
  applyWorkingDirectory(env);
  const config = loadConfig({}, env);
  host = new Host(config, {
    env,
    showWindow: () => showWindow(),
    openBrowser: (url) => {
      if (signInUrls.add(url)) openSignIn(url);
      else log(`Persona Workspace: refused to open a sign-in address that is not http or https: ${url}`);
    },
  });
  host.onStatus((status) => {
    if (status.state === 'running') process.stdout.write(`Persona Workspace: agents connect to ${status.url}\n`);
    if (status.state === 'failed') log(`Persona Workspace: the server could not start: ${status.error}`);
    updateTray();
  });
  launchAtLogin = await loginItem()
    .enabled()
    .catch(() => false);
  createTray();
  controlUrl = await host.open();
  registerIpc(host, config.skillsDir);
  await Promise.all([watchSignIns(host), watchConnections(host)]);
  if (settings.startServerAtLaunch) startServer();
  if (windowWanted) showWindow();
}

/**
 * Puts each agent sign-in to the owner in a window of its own, from the tray: Allow, Deny or
 * Decide later (the default). The same request also waits under Agent access and for `approve`.
 * Looked for when the server says sign-ins changed (a client asked, another surface answered).
 */
async function watchSignIns(current: Host): Promise<void> {
  const prompted = new PromptedSignIns();
  const approvals = await current.approvals();
  const look = async () => {
    for (const request of prompted.fresh(await approvals.pending())) {
      void dialog
        .showMessageBox(signInDialog(request))
        .then(async ({ response }) => {
          const answer = answerOf(response);
          if (answer === 'approve') await approvals.approve(request.code, LOCAL_PERSON);
          else if (answer === 'deny') await approvals.deny(request.code, LOCAL_PERSON);
        })
        .catch((error: unknown) =>
          log(`Persona Workspace: the answer to ${request.clientName}'s sign-in was not saved: ${(error as Error).message}`),
        );
    }
  };
  const lookAndSay = () =>
    void look().catch((error: unknown) => log(`Persona Workspace: cannot read the waiting sign-ins: ${(error as Error).message}`));
  (await current.changes()).subscribe((change) => {
    if (change.topic === 'sign-ins') lookAndSay();
  });
  lookAndSay();
}

/** The connections waiting for their person to sign in (the tray's attention state), looked for when any connection changes. */
async function watchConnections(current: Host): Promise<void> {
  const look = async () => {
    const found = await current.signInsNeeded(LOCAL_PERSON);
    if (JSON.stringify(found) === JSON.stringify(upstreamSignIns)) return;
    upstreamSignIns = found;
    updateTray();
  };
  const lookAndSay = () =>
    void look().catch((error: unknown) => log(`Persona Workspace: cannot read the connections' states: ${(error as Error).message}`));
  (await current.changes()).subscribe((change) => {
    if (change.topic === 'connections' || change.topic === 'places') lookAndSay();
  });
  lookAndSay();
}

function startServer(): void {
  // A failure is shown by the tray's status line (host.onStatus); nothing else to do here.
  host?.start().catch(() => {});
}

/** Shows the window; `section` ("connections") opens that screen of the page. */
function showWindow(section?: string): void {
  windowWanted = true;
  if (!controlUrl || quitting) return;
  const url = section ? `${controlUrl}/#${section}` : controlUrl;
  if (!window || window.isDestroyed()) {
    // Shown once its page is painted (ready-to-show), not as an empty frame before.
    window = createWindow(url);
    return;
  }
  if (section)
    window.loadURL(url).catch((error: unknown) => log(`Persona Workspace: the window could not load ${url}: ${(error as Error).message}`));
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

function createWindow(url: string): BrowserWindow {
  const win = new BrowserWindow(windowOptions({ preload: PRELOAD, show: false }));
  win.on('close', (event) => {
    if (quitting) return;
    event.preventDefault();
    win.hide();
    sayKeepsRunning();
  });
  win.once('ready-to-show', () => win.show());
  win.loadURL(url).catch((error: unknown) => log(`Persona Workspace: the window could not load ${url}: ${(error as Error).message}`));
  return win;
}

/** The first hide to the tray ever says that the app keeps running there (TrayHint remembers it). */
function sayKeepsRunning(): void {
  void trayHint?.onHide().then(({ show, problem }) => {
    if (problem) log(`Persona Workspace: ${problem}`);
    if (!show) return;
    // Windows shows it as a balloon from the tray icon itself; elsewhere a desktop notification.
    if (process.platform === 'win32' && tray) tray.displayBalloon({ ...TRAY_HINT, iconType: 'info' });
    else if (Notification.isSupported()) new Notification({ title: TRAY_HINT.title, body: TRAY_HINT.content, silent: true }).show();
  });
}

/** Applies navigationDecision; answers it, having opened a sign-in URL in the system browser. */
function guardNavigation(url: string, newWindow: boolean): ReturnType<typeof navigationDecision> {
  const controlOrigin = controlUrl && originOf(controlUrl);
  if (!controlOrigin) return 'deny';
  const decision = navigationDecision(url, { controlOrigin, signInUrls, newWindow });
  if (decision === 'external') openSignIn(url);
  return decision;
}

function openSignIn(url: string): void {
  if (!signInUrls.claim(url)) return;
  shell
    .openExternal(url)
    .catch((error: unknown) => log(`Persona Workspace: the browser could not open the sign-in page: ${(error as Error).message}`));
}

function registerIpc(running: Host, skillsDir: string): void {
  handle('app:config', async () => ({ apiBase: controlUrl!, adminToken: await running.adminToken() }));
  handle('app:open-external', (url) => {
    if (!signInUrls.has(url)) throw new Error('Only sign-in pages that this app started open in the browser.');
    openSignIn(url);
  });
  handle('app:launch-at-login', async (...args) => {
    if (args.length === 1) await setLaunchAtLogin(args[0]);
    return launchAtLogin;
  });
  handle('skills:open-folder', async (name) => {
    // The page names the skill; only a folder directly inside the skills folder ever opens.
    const problem = await shell.openPath(skillFolderPath(skillsDir, name));
    if (problem) throw new Error(`The folder of ${name} could not be opened: ${problem}`);
  });
  handle('app:quit', () => {
    app.quit();
  });
}

/** Answers an IPC channel of the preload, only for the top frame of the app's window showing the control plane. */
function handle<C extends IpcChannel>(
  channel: C,
  answer: (...args: IpcChannels[C]['args']) => IpcChannels[C]['result'] | Promise<IpcChannels[C]['result']>,
): void {
  ipcMain.handle(channel, (event: IpcMainInvokeEvent, ...args: unknown[]) => {
    const controlOrigin = controlUrl && originOf(controlUrl);
    if (!controlOrigin || !senderAllowed(senderOf(event), controlOrigin))
      throw new Error(`${channel} is only available to the app's own window.`);
    return answer(...checkArgs(channel, args));
  });
}

function senderOf(event: IpcMainInvokeEvent): IpcSender {
  const frame = event.senderFrame;
  const live = frame !== null && !frame.isDestroyed();
  return {
    frameUrl: live ? frame.url : undefined,
    topFrame: live && frame.parent === null,
    appWindow: window !== undefined && !window.isDestroyed() && BrowserWindow.fromWebContents(event.sender) === window,
  };
}

function createTray(): void {
  trayIcon = trayIconName(trayState(host!.status, upstreamSignIns));
  tray = new Tray(trayImage(trayIcon));
  if (trayClickAction(process.platform) === 'open-window') tray.on('click', () => showWindow());
  updateTray();
}

function trayImage(name: TrayIconName): NativeImage {
  const mac = process.platform === 'darwin';
  const icon = nativeImage.createFromBuffer(trayIconPng(name, mac ? 'template' : 'color'));
  if (!mac) return icon;
  // The menu bar takes 16 points; the 32-pixel drawing is its 2× version.
  const small = icon.resize({ width: 16, height: 16 });
  small.addRepresentation({ scaleFactor: 2, buffer: icon.toPNG() });
  small.setTemplateImage(true);
  return small;
}

/** Rebuilds the tray from the host's state and the sign-ins waiting: icon, tooltip and menu. */
function updateTray(): void {
  if (!tray || !host) return;
  const name = trayIconName(trayState(host.status, upstreamSignIns));
  if (name !== trayIcon) {
    trayIcon = name;
    tray.setImage(trayImage(name));
  }
  tray.setToolTip(trayTooltip(host.status, upstreamSignIns));
  tray.setContextMenu(Menu.buildFromTemplate(trayMenuModel(host.status, { launchAtLogin, upstreamSignIns }).map(menuItem)));
}

function menuItem(item: TrayItem): MenuItemConstructorOptions {
  switch (item.kind) {
    case 'status':
      return { label: item.label, enabled: false };
    case 'separator':
      return { type: 'separator' };
    case 'action':
      return { label: item.label, enabled: item.enabled, click: () => trayAction(item.id) };
    case 'checkbox':
      return { label: item.label, type: 'checkbox', checked: item.checked, click: () => trayAction(item.id) };
  }
}

function trayAction(id: TrayAction): void {
  switch (id) {
    case 'start':
      startServer();
      break;
    case 'stop':
      host?.stop().catch((error: unknown) => log(`Persona Workspace: stopping the server failed: ${(error as Error).message}`));
      break;
    case 'open-window':
      showWindow();
      break;
    case 'open-connections':
      showWindow('connections');
      break;
    case 'copy-mcp-url':
      if (host?.status.state === 'running')
        clipboard
          .writeText(host.status.url)
          .catch((error: unknown) => log(`Persona Workspace: the address could not be copied: ${(error as Error).message}`));
      break;
    case 'toggle-launch-at-login':
      setLaunchAtLogin(!launchAtLogin).catch((error: unknown) =>
        log(`Persona Workspace: launch at login could not be changed: ${(error as Error).message}`),
      );
      break;
    case 'quit':
      app.quit();
      break;
  }
}

async function setLaunchAtLogin(enabled: boolean): Promise<void> {
  const item = loginItem();
  await item.set(enabled);
  launchAtLogin = await item.enabled();
  updateTray();
}

/**
 * Launch at login: Electron's login items on macOS and Windows, an XDG autostart entry on Linux.
 * Either way the login start passes HIDDEN_ARG, so it comes up in the tray without a window; an
 * unpackaged run (electron <app path>) needs its app path in the command as well.
 */
function loginItem(): { enabled(): Promise<boolean>; set(enabled: boolean): Promise<void> } {
  const appArgs = app.isPackaged ? [] : [app.getAppPath()];
  if (process.platform === 'linux') {
    // An AppImage runs from a temporary mount: the entry must start the AppImage file itself.
    return new LinuxAutostart(autostartPath(), [process.env.APPIMAGE ?? process.execPath, ...appArgs]);
  }
  const args = [...appArgs, HIDDEN_ARG];
  return {
    enabled: async () => app.getLoginItemSettings({ args }).openAtLogin,
    set: async (openAtLogin) => app.setLoginItemSettings({ openAtLogin, args }),
  };
}

/** The application menu: Quit (which stops the host) and the editing shortcuts the page's fields need. */
function appMenu(): MenuItemConstructorOptions[] {
  if (process.platform === 'darwin') return [{ role: 'appMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }];
  return [{ role: 'fileMenu' }, { role: 'editMenu' }];
}
