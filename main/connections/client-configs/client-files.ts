import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { CLIENTS, type ClientId } from '../../../common/api/client-configs.js';

export { CLIENTS, type ClientId };

export const CLIENT_NAMES: Record<ClientId, string> = {
  'claude-desktop': 'Claude Desktop',
  cursor: 'Cursor',
  vscode: 'VS Code',
  'claude-code': 'Claude Code',
};

/** One configuration file of a client: whose, for whom, where, and under which key its servers are. */
export interface ClientFile {
  client: ClientId;
  /** `user`: the person's own, for every project; `project`: a folder's (here, a place's). */
  scope: 'user' | 'project';
  path: string;
  /** The path to the servers object in the JSON: `mcpServers` (Claude, Cursor), `servers` (VS Code). */
  serversAt: string[];
  /**
   * Where this app writes its own entry for that client and scope. The others are read for import
   * only: VS Code's servers in `settings.json` (it moved them to `mcp.json`), Claude Code's
   * per-folder servers in `~/.claude.json` (its own to write).
   */
  writable: boolean;
}

export interface Machine {
  home: string;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}

/**
 * The user-level files, where each client keeps them on this platform:
 * Claude Desktop's `claude_desktop_config.json` in its application-support folder (Linux: the
 * unofficial builds' `~/.config/Claude`), Cursor's `~/.cursor/mcp.json`, VS Code's `mcp.json` in
 * its user folder (and the `mcp.servers` of its `settings.json`, where it kept them before), and
 * Claude Code's `~/.claude.json` (its user-scope servers).
 */
export function userFiles({ home, platform, env }: Machine): ClientFile[] {
  const appData = env.APPDATA && isAbsolute(env.APPDATA) ? env.APPDATA : join(home, 'AppData', 'Roaming');
  const xdgConfig = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config');
  const appSupport = platform === 'darwin' ? join(home, 'Library', 'Application Support') : platform === 'win32' ? appData : xdgConfig;
  return [
    {
      client: 'claude-desktop',
      scope: 'user',
      path: join(appSupport, 'Claude', 'claude_desktop_config.json'),
      serversAt: ['mcpServers'],
      writable: true,
    },
    { client: 'cursor', scope: 'user', path: join(home, '.cursor', 'mcp.json'), serversAt: ['mcpServers'], writable: true },
    { client: 'vscode', scope: 'user', path: join(appSupport, 'Code', 'User', 'mcp.json'), serversAt: ['servers'], writable: true },
    {
      client: 'vscode',
      scope: 'user',
      path: join(appSupport, 'Code', 'User', 'settings.json'),
      serversAt: ['mcp', 'servers'],
      writable: false,
    },
    { client: 'claude-code', scope: 'user', path: join(home, '.claude.json'), serversAt: ['mcpServers'], writable: true },
  ];
}

/**
 * A folder's own files: Cursor's `.cursor/mcp.json`, VS Code's `.vscode/mcp.json` (and the
 * `mcp.servers` of `.vscode/settings.json`), Claude Code's `.mcp.json`, and Claude Code's servers
 * for that folder kept in `~/.claude.json` (its "local" scope).
 */
export function projectFiles(folder: string, machine: Machine): ClientFile[] {
  return [
    { client: 'cursor', scope: 'project', path: join(folder, '.cursor', 'mcp.json'), serversAt: ['mcpServers'], writable: true },
    { client: 'vscode', scope: 'project', path: join(folder, '.vscode', 'mcp.json'), serversAt: ['servers'], writable: true },
    { client: 'vscode', scope: 'project', path: join(folder, '.vscode', 'settings.json'), serversAt: ['mcp', 'servers'], writable: false },
    { client: 'claude-code', scope: 'project', path: join(folder, '.mcp.json'), serversAt: ['mcpServers'], writable: true },
    {
      client: 'claude-code',
      scope: 'project',
      path: join(machine.home, '.claude.json'),
      serversAt: ['projects', folder, 'mcpServers'],
      writable: false,
    },
  ];
}

/** The machine whose clients are read: the home folder and environment of the person who runs the app. */
export function machineOf(env: NodeJS.ProcessEnv): Machine {
  return { home: env.HOME && env.HOME.startsWith('/') ? env.HOME : homedir(), platform: process.platform, env };
}
