import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServerInfo } from '../../common/api/server.js';
import { mcpUrl } from '../../renderer/features/server/server-words.js';

const stopped: ServerInfo = {
  state: 'stopped',
  listen: { host: '127.0.0.1', port: 9100 },
  reachable: 'this-machine',
  authMode: { required: true, external: [] },
  runningCommands: 0,
  agentSessions: 0,
};

describe('mcpUrl', () => {
  it('is the live URL while running, else the configured one', () => {
    assert.equal(mcpUrl(stopped), 'http://127.0.0.1:9100/mcp');
    assert.equal(mcpUrl({ ...stopped, state: 'running', url: 'http://127.0.0.1:41234/mcp', auth: true }), 'http://127.0.0.1:41234/mcp');
    assert.equal(mcpUrl({ ...stopped, listen: { host: '127.0.0.1', port: 0 } }), undefined);
  });

  it('is the public URL behind a reverse proxy, the one the client configs must carry', () => {
    assert.equal(
      mcpUrl({ ...stopped, state: 'running', url: 'http://127.0.0.1:9100/mcp', auth: true, publicUrl: 'https://box.example.com' }),
      'https://box.example.com/mcp',
    );
  });
});
