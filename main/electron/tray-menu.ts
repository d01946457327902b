import type { HostStatus } from '../../common/api/host-status.js';
import type { UpstreamSignInNeeded } from '../connections/sign-ins-needed.js';

// The tray menu as data, so that what it shows in every state is tested without Electron. Everything
// lives in the menu, a click on the icon only being a shortcut to Open window: many Linux tray hosts
// never send one.

export type TrayAction = 'start' | 'stop' | 'open-window' | 'open-connections' | 'copy-mcp-url' | 'toggle-launch-at-login' | 'quit';

export type TrayItem =
  | { kind: 'status'; label: string }
  | { kind: 'action'; id: TrayAction; label: string; enabled: boolean }
  | { kind: 'checkbox'; id: TrayAction; label: string; checked: boolean }
  | { kind: 'separator' };

/** "Issue tracker (This machine) needs you to sign in", or "3 connections need you to sign in". */
export function upstreamSignInLine(upstreamSignIns: readonly UpstreamSignInNeeded[]): string {
  if (upstreamSignIns.length === 1) return `${upstreamSignIns[0]!.displayName} (${upstreamSignIns[0]!.place}) needs you to sign in`;
  return `${upstreamSignIns.length} connections need you to sign in`;
}

export function trayStatusLine(status: HostStatus): string {
  switch (status.state) {
    case 'running':
      return `Running on ${status.url}`;
    case 'starting':
      return 'Starting…';
    case 'stopping':
      return 'Stopping…';
    case 'stopped':
      return 'Stopped';
    case 'failed':
      return `Failed: ${status.error}`;
  }
}

export function trayMenuModel(
  status: HostStatus,
  options: { launchAtLogin: boolean; upstreamSignIns: readonly UpstreamSignInNeeded[] },
): TrayItem[] {
  const running = status.state === 'running';
  // While starting or stopping neither button applies; the menu is rebuilt when that settles.
  const toggle: TrayItem =
    running || status.state === 'stopping'
      ? { kind: 'action', id: 'stop', label: 'Stop server', enabled: running }
      : { kind: 'action', id: 'start', label: 'Start server', enabled: status.state !== 'starting' };
  // A sign-in waiting is what the person can act on first: it opens the Connections screen.
  const signIn: TrayItem[] =
    options.upstreamSignIns.length > 0
      ? [{ kind: 'action', id: 'open-connections', label: `${upstreamSignInLine(options.upstreamSignIns)}…`, enabled: true }]
      : [];
  return [
    { kind: 'status', label: trayStatusLine(status) },
    ...signIn,
    { kind: 'separator' },
    toggle,
    { kind: 'action', id: 'open-window', label: 'Open window', enabled: true },
    { kind: 'action', id: 'copy-mcp-url', label: 'Copy MCP URL', enabled: running },
    { kind: 'separator' },
    { kind: 'checkbox', id: 'toggle-launch-at-login', label: 'Launch at login', checked: options.launchAtLogin },
    { kind: 'separator' },
    { kind: 'action', id: 'quit', label: 'Quit Persona Workspace', enabled: true },
  ];
}
