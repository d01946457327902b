/** The owner's choice for a place or a token: always, never, or `auto` (by the number of tools). */
export type ToolSearchMode = 'on' | 'off' | 'auto';
export const TOOL_SEARCH_MODES: readonly ToolSearchMode[] = ['on', 'off', 'auto'];

/** Cursor accepts about 40 tools; past that, tool search is on unless the owner said otherwise. */
export const DEFAULT_TOOL_SEARCH_THRESHOLD = 40;

export interface ToolSearchDecision {
  on: boolean;
  /** Which setting decided: the token's, the place's, or the tool count against the threshold. */
  by: 'token' | 'place' | 'automatic';
}

/** The token's setting wins over the place's; with neither, tool search is on past the threshold. */
export function decideToolSearch(input: {
  token?: ToolSearchMode;
  place?: ToolSearchMode;
  toolCount: number;
  threshold: number;
}): ToolSearchDecision {
  if (input.token && input.token !== 'auto') return { on: input.token === 'on', by: 'token' };
  if (input.place && input.place !== 'auto') return { on: input.place === 'on', by: 'place' };
  return { on: input.toolCount > input.threshold, by: 'automatic' };
}

export class ToolSearchModeError extends Error {
  override readonly name = 'ToolSearchModeError';
}

/** A mode as a person typed it (CLI, API), or an error that lists the choices. */
export function parseToolSearchMode(value: unknown): ToolSearchMode {
  if (typeof value === 'string' && (TOOL_SEARCH_MODES as readonly string[]).includes(value)) return value as ToolSearchMode;
  throw new ToolSearchModeError(
    `Tool search must be on, off or auto (auto: on when the place has more than the threshold of tools), not ${JSON.stringify(value)}.`,
  );
}
