import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UpstreamTool } from '../connections/gateway/upstream-connection.js';
import { gatewayToolNames, serverNameOf, storeIdOf } from '../connections/store/naming.js';
import { connectionTools } from './place-tools.js';

describe('connectionTools', () => {
  const name = serverNameOf(storeIdOf('local', 'Crew/alpha'), 'google-calendar');
  const schema = { type: 'object' as const, properties: {} };
  const upstream: UpstreamTool[] = [
    { name: 'list-events', title: 'List Events', description: 'List events', inputSchema: schema },
    { name: 'create-event', annotations: { title: 'Create an event' }, description: 'Create an event', inputSchema: schema },
    { name: 'get-current-time', description: 'Now', inputSchema: schema },
    { name: 'x'.repeat(60), description: 'A long one', inputSchema: schema },
  ];
  const call = async () => ({ content: [] });

  it("titles each tool with the connection's name and the upstream's own name (and title, when it has one)", () => {
    const tools = connectionTools({ name, displayName: 'Google Calendar' }, 'Google Calendar', upstream, call);
    assert.deepEqual(
      tools.map((t) => t.definition.title),
      [
        'Google Calendar: List Events (list-events)',
        'Google Calendar: Create an event (create-event)',
        'Google Calendar: get-current-time',
        `Google Calendar: ${'x'.repeat(60)}`,
      ],
    );
    assert.deepEqual(tools[0]!.upstream, { tool: 'list-events', server: 'Google Calendar', service: 'Google Calendar' });
    assert.deepEqual(
      tools.map((t) => t.definition.name),
      gatewayToolNames(
        name,
        upstream.map((t) => t.name),
      ),
    );
  });

  it('leaves out the tools turned off without renaming the others', () => {
    const all = connectionTools({ name, displayName: 'Google Calendar' }, 'hint', upstream, call);
    const some = connectionTools({ name, displayName: 'Google Calendar', disabledTools: ['create-event'] }, 'hint', upstream, call);
    assert.deepEqual(
      some.map((t) => t.definition.name),
      all.filter((t) => t.upstream?.tool !== 'create-event').map((t) => t.definition.name),
    );
  });
});
