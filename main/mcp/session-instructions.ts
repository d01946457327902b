/** Clients put `instructions` in the model's context on every turn: kept short. */
export const INSTRUCTIONS_MAX_BYTES = 1024;

export interface SessionFacts {
  hostname: string;
  /** The server's working directory: where relative paths and bash commands start. */
  cwd: string;
  /** The place the session works in, as people call it. */
  place: string;
  /** The display names of the place's connections that work now. */
  connections: string[];
}

/**
 * What an agent should know before its first call: whose machine this is, where it works, which
 * services it reaches, and when to use skill and manage_my_mcp_servers.
 */
export function sessionInstructions(facts: SessionFacts): string {
  const names = [...new Set(facts.connections)];
  // Many connections: name the first ones and count the rest, rather than overflow the budget.
  for (let shown = names.length; ; shown -= 1) {
    const text = render(facts, names.slice(0, shown), names.length - shown);
    if (Buffer.byteLength(text) <= INSTRUCTIONS_MAX_BYTES) return text;
    if (shown === 0) return cut(text);
  }
}

function render(facts: SessionFacts, names: string[], more: number): string {
  const connections =
    names.length + more === 0
      ? 'It has no MCP connections yet.'
      : `Its MCP connections, whose tools are named <connection>__<tool>: ${names.join(', ')}${more ? ` and ${more} more` : ''}.`;
  return [
    `This server is the machine "${facts.hostname}", with full access under the account that runs it; working directory ${facts.cwd}.`,
    'Use read, write and edit for files (paths absolute or relative to the working directory) and bash for everything else: listing, searching, building, running.',
    'Before a task an installed skill covers, load it with the skill tool (resource://skills lists them) and follow it.',
    `This session works in the place ${facts.place}. ${connections}`,
    "Use manage_my_mcp_servers to see, add or remove this place's connections when a service you need is missing or fails.",
    "When tools/list shows search_tools, find a service's tools with it and run them with call_tool.",
  ].join('\n');
}

/** Only a huge host name or path gets here. */
function cut(text: string): string {
  let short = text;
  while (Buffer.byteLength(short) > INSTRUCTIONS_MAX_BYTES - 3) short = short.slice(0, -16);
  return `${short}…`;
}
