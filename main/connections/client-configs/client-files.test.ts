import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectFiles, userFiles } from './client-files.js';

// Where each client keeps its MCP servers, as each documents it, on each system.
describe("the MCP clients' configuration files", () => {
  const where = (files: ReturnType<typeof userFiles>) => files.map((f) => [f.client, f.path, f.serversAt.join('.'), f.writable]);

  it('on macOS: the application-support folder, and the home folder', () => {
    assert.deepEqual(where(userFiles({ home: '/Users/ann', platform: 'darwin', env: {} })), [
      ['claude-desktop', '/Users/ann/Library/Application Support/Claude/claude_desktop_config.json', 'mcpServers', true],
      ['cursor', '/Users/ann/.cursor/mcp.json', 'mcpServers', true],
      ['vscode', '/Users/ann/Library/Application Support/Code/User/mcp.json', 'servers', true],
      ['vscode', '/Users/ann/Library/Application Support/Code/User/settings.json', 'mcp.servers', false],
      ['claude-code', '/Users/ann/.claude.json', 'mcpServers', true],
    ]);
  });

  it('on Windows: %APPDATA%, and the home folder', () => {
    const files = userFiles({ home: 'C:\\Users\\ann', platform: 'win32', env: { APPDATA: '/roaming' } });
    assert.deepEqual(
      files.map((f) => f.path.replaceAll('\\', '/')),
      [
        '/roaming/Claude/claude_desktop_config.json',
        'C:/Users/ann/.cursor/mcp.json',
        '/roaming/Code/User/mcp.json',
        '/roaming/Code/User/settings.json',
        'C:/Users/ann/.claude.json',
      ],
    );
  });

  it('on Linux: $XDG_CONFIG_HOME (else ~/.config), and the home folder', () => {
    assert.deepEqual(
      userFiles({ home: '/home/ann', platform: 'linux', env: {} }).map((f) => f.path),
      [
        '/home/ann/.config/Claude/claude_desktop_config.json',
        '/home/ann/.cursor/mcp.json',
        '/home/ann/.config/Code/User/mcp.json',
        '/home/ann/.config/Code/User/settings.json',
        '/home/ann/.claude.json',
      ],
    );
    // A relative XDG_CONFIG_HOME is ignored, as the XDG specification says.
    assert.equal(
      userFiles({ home: '/home/ann', platform: 'linux', env: { XDG_CONFIG_HOME: 'conf' } })[0]!.path,
      '/home/ann/.config/Claude/claude_desktop_config.json',
    );
    assert.equal(userFiles({ home: '/home/ann', platform: 'linux', env: { XDG_CONFIG_HOME: '/cfg' } })[2]!.path, '/cfg/Code/User/mcp.json');
  });

  it("a folder's own files, and Claude Code's entries for that folder in ~/.claude.json", () => {
    assert.deepEqual(where(projectFiles('/ws/Crew/alpha', { home: '/home/ann', platform: 'linux', env: {} })), [
      ['cursor', '/ws/Crew/alpha/.cursor/mcp.json', 'mcpServers', true],
      ['vscode', '/ws/Crew/alpha/.vscode/mcp.json', 'servers', true],
      ['vscode', '/ws/Crew/alpha/.vscode/settings.json', 'mcp.servers', false],
      ['claude-code', '/ws/Crew/alpha/.mcp.json', 'mcpServers', true],
      ['claude-code', '/home/ann/.claude.json', 'projects./ws/Crew/alpha.mcpServers', false],
    ]);
  });
});
