import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { ConnectionView, PlaceConnections } from '../connections/place-connections.js';
import type { Place } from '../places/place-root.js';
import { userError } from '../user-errors.js';
import { ALWAYS_LOAD, defineTool, toolError, type SessionTool } from './session-tool.js';

/** Every session offers this tool: its input is defined once (see toolShape). */
const INPUT = {
  action: z.enum(['list', 'connect', 'test', 'remove']),
  catalog: z.string().optional().describe('connect: the catalog id of the connector, e.g. "linear".'),
  secret: z.string().optional().describe("connect: this place's secret holding the API key, if the connector needs one."),
  env: z
    .record(z.string(), z.string())
    .optional()
    .describe("connect, a local server: each variable it reads → this place's secret holding its value."),
  name: z.string().optional().describe('test, remove: the connection name, e.g. "u1a2b3c4d__linear".'),
  owner: z.string().optional().describe('test, remove: whose connection, when several people added the same server.'),
};

/**
 * manage_my_mcp_servers: the agent lists, connects and removes the MCP connections of the place it
 * works in, as the person it acts for, under the same rules as the page.
 */
export function manageConnectionsTool(place: Place, person: string, connections: PlaceConnections): SessionTool {
  return defineTool({
    name: 'manage_my_mcp_servers',
    title: "Manage this place's MCP connections",
    description:
      `List, connect, test or remove the MCP connections of ${place.label}, the place this session works in. ` +
      'Each connection uses the login of the person who added it, and everyone who uses this place uses it as that person. ' +
      'list: each connection, whose login it uses, whether it works now (its server is asked) and if not, why. ' +
      'connect: add a catalog connector by its id, with the secrets it needs; it is tried at once. ' +
      "test: ask a connection's server again now. remove: remove a connection and its login. " +
      "Adding and removing need edit rights on the place. A connection's tools are named <name>__<tool>.",
    input: INPUT,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    // The session's instructions send agents here: never deferred behind a client's tool search.
    _meta: ALWAYS_LOAD,
    handler: (args) =>
      answer(async () => {
        switch (args.action) {
          case 'list': {
            const list = await connections.list(person, place);
            if (list.length === 0) return `${place.label} has no MCP connections yet. Add one with action "connect" and a catalog id.`;
            return list.map(describe).join('\n');
          }
          case 'connect': {
            if (!args.catalog) throw new MissingArgument('connect needs catalog: the id of a connector from the catalog.');
            const added = await connections.add(person, place, {
              catalog: args.catalog,
              ...(args.secret && { secret: args.secret }),
              ...(args.env && { env: args.env }),
            });
            if (added.state !== 'connected' && added.state !== 'sign-in')
              return `Added ${added.displayName} as ${added.name}, but it does not work yet (${added.state}): ${added.reason}`;
            try {
              const connected = await connections.connect(person, place, added.name);
              if ('authorizationUrl' in connected) {
                return `Added ${added.displayName} as ${added.name}. ${added.ownerName} must sign in: open ${connected.authorizationUrl} in a browser on the machine running this server.`;
              }
              return `Added and connected ${added.displayName} as ${added.name}: ${connected.tools.length} tools, named ${added.name}__<tool>.`;
            } catch (error) {
              const known = userError(error);
              if (!known) throw error;
              return `Added ${added.displayName} as ${added.name}, but it could not connect yet: ${known.message}`;
            }
          }
          case 'test': {
            if (!args.name) return 'test needs name: the connection name as list shows it.';
            return describe(await connections.test(person, place, args.name, args.owner));
          }
          case 'remove': {
            if (!args.name) throw new MissingArgument('remove needs name: the connection name as list shows it (action "list").');
            const removed = await connections.remove(person, place, args.name, args.owner);
            return `Removed ${removed.displayName} (${removed.name}, ${removed.ownerName}'s login) from ${place.label}; its login was deleted.`;
          }
        }
      }),
  });
}

/** The action was called without an argument it needs: the call is refused and changes nothing. */
class MissingArgument extends Error {}

async function answer(fn: () => Promise<string>): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: await fn() }] };
  } catch (error) {
    if (error instanceof MissingArgument) return toolError(error.message);
    const known = userError(error);
    if (known) return toolError(known.message);
    throw error;
  }
}

function describe(c: ConnectionView): string {
  const state = c.state === 'connected' ? `connected (${c.tools ?? 0} tools, checked ${c.checkedAt ?? 'now'})` : `${c.state}: ${c.reason}`;
  return `${c.name}: ${c.displayName}, ${c.ownerName}'s login, ${state}`;
}
