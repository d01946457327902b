import type { HostStatus } from '../../common/api/host-status.js';
import type { UpstreamSignInNeeded } from '../connections/sign-ins-needed.js';
import { upstreamSignInLine, trayStatusLine } from './tray-menu.js';

// What the tray shows, as data: its state, which icon, the tooltip, and what a click on the icon
// does on each platform. main.ts only applies it.

/**
 * running: agents can connect and every connection works as far as sign-ins go; attention: the
 * server runs but a connection needs its person to sign in; stopped: agents cannot connect
 * (stopped, starting, stopping, or failed to start: the tooltip and menu say which).
 */
export type TrayState = 'running' | 'stopped' | 'attention';

export type TrayIconName = `tray-${TrayState}`;

export function trayState(status: HostStatus, upstreamSignIns: readonly UpstreamSignInNeeded[]): TrayState {
  if (status.state !== 'running') return 'stopped';
  return upstreamSignIns.length > 0 ? 'attention' : 'running';
}

export function trayIconName(state: TrayState): TrayIconName {
  return `tray-${state}`;
}

/** "Persona Workspace: Running on <MCP URL>", with the sign-ins waiting on a line of their own. */
export function trayTooltip(status: HostStatus, upstreamSignIns: readonly UpstreamSignInNeeded[]): string {
  const lines = [`Persona Workspace: ${trayStatusLine(status)}`];
  if (upstreamSignIns.length > 0) lines.push(upstreamSignInLine(upstreamSignIns));
  return lines.join('\n');
}

/**
 * What a left click on the icon does where the platform has a habit: Windows opens the app's
 * window; Linux tray hosts send an activation (KDE's left click) that does the same, while hosts
 * that show the menu on a click send none; macOS shows the menu, as menu bar items do.
 */
export function trayClickAction(platform: NodeJS.Platform): 'open-window' | 'menu' {
  return platform === 'darwin' ? 'menu' : 'open-window';
}
