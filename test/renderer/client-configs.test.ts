import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clientConfigs,
  SERVER_NAME,
  SIGN_IN_NOTE,
  TOKEN_PLACEHOLDER,
  toolSearchNote,
} from '../../renderer/features/access/client-configs.js';

const URL = 'http://127.0.0.1:9100/mcp';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0b2tlbjphIn0.c2ln';
const byId = (configs: ReturnType<typeof clientConfigs>) => Object.fromEntries(configs.map((c) => [c.id, c.text]));

describe('clientConfigs', () => {
  it("puts a token just created into every client's configuration as a Bearer header", () => {
    const configs = clientConfigs({ url: URL, authRequired: true, token: TOKEN });
    const texts = byId(configs);
    const headers = { Authorization: `Bearer ${TOKEN}` };
    assert.equal(texts['claude-code'], `claude mcp add --transport http ${SERVER_NAME} "${URL}" --header "Authorization: Bearer ${TOKEN}"`);
    assert.deepEqual(JSON.parse(texts.cursor!), { mcpServers: { [SERVER_NAME]: { url: URL, headers } } });
    assert.deepEqual(JSON.parse(texts.vscode!), { servers: { [SERVER_NAME]: { type: 'http', url: URL, headers } } });
    assert.deepEqual(JSON.parse(texts.generic!), { mcpServers: { [SERVER_NAME]: { type: 'http', url: URL, headers } } });
    for (const c of configs) assert.ok(!c.where.includes(SIGN_IN_NOTE), c.id);
  });

  it('without a token, configures the clients that sign in by themselves header-free', () => {
    const configs = clientConfigs({ url: URL, authRequired: true });
    const texts = byId(configs);
    assert.equal(texts['claude-code'], `claude mcp add --transport http ${SERVER_NAME} "${URL}"`);
    assert.deepEqual(JSON.parse(texts.cursor!), { mcpServers: { [SERVER_NAME]: { url: URL } } });
    assert.deepEqual(JSON.parse(texts.vscode!), { servers: { [SERVER_NAME]: { type: 'http', url: URL } } });
    for (const c of configs.filter((c) => c.id !== 'generic')) assert.ok(c.where.includes(SIGN_IN_NOTE), c.id);
  });

  it('shows a placeholder where no token was just created', () => {
    const generic = clientConfigs({ url: URL, authRequired: true }).find((c) => c.id === 'generic')!;
    assert.ok(generic.text.includes(`Bearer ${TOKEN_PLACEHOLDER}`));
  });

  it('configures no header when the endpoint needs no token', () => {
    const texts = byId(clientConfigs({ url: URL, authRequired: false, token: TOKEN }));
    assert.equal(texts['claude-code'], `claude mcp add --transport http ${SERVER_NAME} "${URL}"`);
    for (const id of ['cursor', 'vscode', 'generic']) assert.ok(!texts[id]!.includes('Authorization'), id);
    for (const c of clientConfigs({ url: URL, authRequired: false })) assert.ok(!c.where.includes(SIGN_IN_NOTE), c.id);
  });
});

describe('toolSearchNote', () => {
  const facts = { on: true, by: 'automatic' as const, toolCount: 156, threshold: 40, place: 'This machine' };

  it('says per client whether tool search is on, and why', () => {
    for (const client of ['claude-code', 'cursor', 'vscode', 'generic'] as const) {
      assert.match(
        toolSearchNote(client, facts),
        /^Tool search is on \(This machine has 156 tools, more than 40\): .*search_tools and call_tool/,
      );
      assert.match(
        toolSearchNote(client, { ...facts, on: false, by: 'place' }),
        /^Tool search is off \(set for This machine\): the agent gets all 156 tools/,
      );
    }
    assert.match(toolSearchNote('generic', { ...facts, by: 'token' }), /set for this token/);
  });

  it('says Claude Code searches by itself, and warns when a capped client would get more tools than it takes', () => {
    assert.match(toolSearchNote('claude-code', facts), /Claude Code also searches tools itself/);
    assert.match(toolSearchNote('cursor', { ...facts, on: false, by: 'place' }), /more than Cursor takes \(about 40\)/);
    assert.match(toolSearchNote('vscode', { ...facts, on: false, by: 'place' }), /more than VS Code takes \(about 128\)/);
    assert.doesNotMatch(toolSearchNote('vscode', { ...facts, on: false, by: 'place', toolCount: 100 }), /takes/);
  });
});
