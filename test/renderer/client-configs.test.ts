import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientConfigs, SERVER_NAME, SIGN_IN_NOTE, TOKEN_PLACEHOLDER } from '../../renderer/features/access/client-configs.js';

const URL = 'http://127.0.0.1:9100/mcp';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0b2tlbjphIn0.c2ln';
const byId = (configs: ReturnType<typeof clientConfigs>) => Object.fromEntries(configs.map((c) => [c.id, c.text]));

describe('clientConfigs', () => {
  it('configures the clients that sign in by themselves header-free, and the others with the token as a Bearer header', () => {
    const configs = clientConfigs({ url: URL, authRequired: true, token: TOKEN });
    const texts = byId(configs);
    assert.equal(texts['claude-code'], `claude mcp add --transport http ${SERVER_NAME} "${URL}"`);
    assert.deepEqual(JSON.parse(texts.cursor!), { mcpServers: { [SERVER_NAME]: { url: URL } } });
    assert.deepEqual(JSON.parse(texts.vscode!), { servers: { [SERVER_NAME]: { type: 'http', url: URL } } });
    assert.deepEqual(JSON.parse(texts.generic!), { mcpServers: { [SERVER_NAME]: { type: 'http', url: URL, headers: { Authorization: `Bearer ${TOKEN}` } } } });
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
