import { readFileSync } from 'node:fs';

/** One service of the evaluation set: a real MCP server's tools/list, as it ships (see `source`). */
export interface SetService {
  /** Short id, used as `<id>/<tool>` in the queries. */
  id: string;
  /** The name a person would give the connection. */
  name: string;
  /** The address it would be added under. */
  url: string;
  /** Where the tool list comes from. */
  source: string;
  tools: SetTool[];
}

export interface SetTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
}

export const SERVICE_IDS = ['github', 'slack', 'sentry', 'supabase', 'notion', 'gcal', 'gmail', 'circleci'] as const;

export function loadSet(): SetService[] {
  return SERVICE_IDS.map((id) => JSON.parse(readFileSync(new URL(`./${id}.json`, import.meta.url), 'utf8')) as SetService);
}
