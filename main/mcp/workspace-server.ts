import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SDK_SCHEMA_VALIDATOR } from '../sdk-schema-validator.js';
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

/** One MCP session's server: the machine's tools and resources, plus the tools of its sources. */
export function createWorkspaceServer(deps: WorkspaceServerDeps): McpServer {
  const server = new McpServer(
    { name: PRODUCT_NAME, version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, resources: {}, logging: {} },
      instructions: deps.instructions,
      jsonSchemaValidator: SDK_SCHEMA_VALIDATOR,
    },
  );
  installToolTable(server, deps.tools, deps.sources, deps.run, deps.toolSearch);
  registerMachineResources(server, { skillsDir: deps.skillsDir });
  enableResourceSubscriptions(server, { 'resource://skills': deps.skillsChanged });
  return server;
}
