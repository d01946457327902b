import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { PRODUCT_NAME, VERSION } from '../version.js';
import { registerMachineResources } from './machine-tools.js';
import { enableResourceSubscriptions, type ChangeSource } from './resource-subscriptions.js';
import type { SessionTool } from './session-tool.js';
import { installToolTable, type ToolRunner, type ToolSearchSwitch, type ToolSource } from './tool-table.js';

export interface WorkspaceServerDeps {
  /** What the agent is told at initialize (see session-instructions.ts). */
  instructions: string;
  skillsDir: string;
  /** Tells when the skill catalog changed, for sessions subscribed to resource://skills. */
  skillsChanged: ChangeSource;
  /** The tools every session has (the machine's). */
  tools: SessionTool[];
  /** Tools that come and go while the session is open. */
  sources: ToolSource[];
  /** Wraps every call (auditing). */
  run: ToolRunner;
  toolSearch: ToolSearchSwitch;
}

/**
 * Unless given one, the SDK's Server makes an Ajv instance with every format for each server: about
 * half a millisecond and tens of KiB per session, for elicitation only, which no session here
 * sends. One, made on first use, serves every session.
 */
let sharedAjv: AjvJsonSchemaValidator | undefined;
const SHARED_VALIDATOR: jsonSchemaValidator = {
  getValidator: (schema) => (sharedAjv ??= new AjvJsonSchemaValidator()).getValidator(schema),
};

/** One MCP session's server: the machine's tools and resources, plus the tools of its sources. */
export function createWorkspaceServer(deps: WorkspaceServerDeps): McpServer {
  const server = new McpServer(
    { name: PRODUCT_NAME, version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, resources: {}, logging: {} },
      instructions: deps.instructions,
      jsonSchemaValidator: SHARED_VALIDATOR,
    },
  );
  installToolTable(server, deps.tools, deps.sources, deps.run, deps.toolSearch);
  registerMachineResources(server, { skillsDir: deps.skillsDir });
  enableResourceSubscriptions(server, { 'resource://skills': deps.skillsChanged });
  return server;
}
