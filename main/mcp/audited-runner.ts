import type { AuditEntry } from '../audit/audit-log.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PolicyKind } from '../places/sandbox-policy.js';
import type { ToolExtra } from './session-tool.js';
import type { ToolRunner } from './tool-table.js';

export interface AuditContext {
  caller: string;
  client?: string;
  place?: string;
  /** The place's sandbox policy when the call runs (the owner may change it while a session is open); `call` is the call's `extra`. */
  policy?: (call: ToolExtra) => Promise<PolicyKind>;
  projectId?: string;
}

/**
 * Records every tool call: who, where, the platform's ids from the request `_meta`, how long, and
 * how it ended. The ids are only logged; nothing here changes what a call may do.
 */
export function auditedRunner(record: (entry: AuditEntry) => void, context: AuditContext): ToolRunner {
  return async (tool, extra, fn, connection) => {
    const started = performance.now();
    const meta = extra._meta ?? {};
    const policy = await context.policy?.(extra).catch(() => undefined);
    const entry = (outcome: AuditEntry['outcome'], error?: string): AuditEntry => ({
      tool,
      caller: context.caller,
      ...(context.client !== undefined && { client: context.client }),
      ...(context.place !== undefined && { place: context.place }),
      ...(policy !== undefined && { policy }),
      ...(context.projectId !== undefined && { projectId: context.projectId }),
      ...optionalId('executionId', meta.execution_id ?? meta.executionId),
      ...optionalId('workspaceId', meta.workspace_id ?? meta.workspaceId),
      durationMs: Math.round(performance.now() - started),
      outcome,
      ...(error !== undefined && { error }),
      ...(connection && { connection }),
    });
    try {
      const result = await fn();
      record(extra.signal.aborted ? entry('cancelled') : entryFor(result, entry));
      return result;
    } catch (error) {
      record(entry(extra.signal.aborted ? 'cancelled' : 'error', (error as Error).name));
      throw error;
    }
  };
}

/**
 * How a call that returned ended: a command's answer says when it timed out or was stopped (it is
 * still an answer, with the output so far), other tools' errors say so with isError.
 */
function entryFor(result: CallToolResult, entry: (outcome: AuditEntry['outcome'], error?: string) => AuditEntry): AuditEntry {
  const ended = result.structuredContent ?? {};
  if (ended.timedOut === true) return entry('timeout', firstLine(result.content[0]));
  if (ended.cancelled === true || ended.serverStopped === true) return entry('cancelled');
  return result.isError ? entry('error', firstLine(result.content[0])) : entry('ok');
}

function optionalId<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return typeof value === 'string' && value.length > 0 && value.length <= 200 ? ({ [key]: value } as { [P in K]: string }) : {};
}

/** Long enough for a whole reason (the page shows all of it on a click), short enough to cap a log line. */
const MAX_ERROR_CHARS = 1000;

/** The error's first line, capped at a word: the tools' own messages, never file contents or output. */
function firstLine(content: unknown): string | undefined {
  if (!content || typeof content !== 'object' || (content as { type?: unknown }).type !== 'text') return undefined;
  const line = String((content as { text: unknown }).text).split('\n', 1)[0]!;
  if (line.length <= MAX_ERROR_CHARS) return line;
  const cut = line.slice(0, MAX_ERROR_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > MAX_ERROR_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}
