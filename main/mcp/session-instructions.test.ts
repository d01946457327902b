import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { INSTRUCTIONS_MAX_BYTES, sessionInstructions } from './session-instructions.js';

describe('session instructions', () => {
  const facts = { hostname: 'build-box', cwd: '/srv/work', place: 'Crew alpha', connections: ['Linear', 'Notion', 'Sentry'] };

  it('name the machine, its working directory, the place and its connections, and when to use skill and manage_my_mcp_servers', () => {
    const text = sessionInstructions(facts);
    for (const part of [
      'build-box',
      '/srv/work',
      'Crew alpha',
      'Linear',
      'Notion',
      'Sentry',
      'skill',
      'manage_my_mcp_servers',
      'search_tools',
    ]) {
      assert.ok(text.includes(part), `missing ${part} in:\n${text}`);
    }
    assert.ok(Buffer.byteLength(text) < INSTRUCTIONS_MAX_BYTES);
  });

  it('say when the place has no connections', () => {
    assert.match(sessionInstructions({ ...facts, connections: [] }), /no MCP connections/);
  });

  it('stay under 1 KB with many connections, naming the first and counting the rest', () => {
    const many = Array.from({ length: 200 }, (_, i) => `Service number ${i}`);
    const text = sessionInstructions({ ...facts, connections: many });
    assert.ok(Buffer.byteLength(text) <= INSTRUCTIONS_MAX_BYTES, `${Buffer.byteLength(text)} bytes`);
    assert.ok(text.includes('Service number 0'));
    assert.match(text, /and \d+ more/);
    assert.ok(text.includes('manage_my_mcp_servers'), 'the guidance after the list is kept');
  });

  it('stay under 1 KB even for a huge place name', () => {
    const text = sessionInstructions({ ...facts, place: 'x'.repeat(3000) });
    assert.ok(Buffer.byteLength(text) <= INSTRUCTIONS_MAX_BYTES);
  });
});
