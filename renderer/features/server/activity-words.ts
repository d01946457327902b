import type { AgentToken } from '../../api/access';
import type { ActivityRecord } from '../../api/server';

// How a row of recent activity reads: who called, how long it took, how it ended.

/** The id of one of the app's own tokens, from a caller (`token:<id>`). */
export function tokenIdOf(caller: string): string | undefined {
  return /^token:([0-9a-f]{16})$/.exec(caller)?.[1];
}

/** The app's tokens by name; another issuer's callers by their user id. */
export function callerWords(caller: string, tokens: AgentToken[] | undefined, client?: string): { name: string; detail: string } {
  if (client !== undefined) return { name: client, detail: 'signed in, allowed by you' };
  const id = tokenIdOf(caller);
  if (id) {
    const token = tokens?.find((t) => t.id === id);
    return token
      ? { name: token.name, detail: 'token made here' }
      : { name: `Token ${id}`, detail: tokens ? 'no longer listed' : 'token made here' };
  }
  if (caller === 'local') return { name: 'This machine', detail: 'no token (auth off)' };
  return { name: caller, detail: 'your platform’s user' };
}

export function durationWords(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function timeWords(iso: string, now = new Date()): string {
  const time = new Date(iso);
  const clock = time.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return time.toDateString() === now.toDateString()
    ? clock
    : `${time.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${clock}`;
}

export const OUTCOME_WORDS: Record<ActivityRecord['outcome'], string> = {
  ok: 'OK',
  error: 'Failed',
  timeout: 'Timed out',
  cancelled: 'Cancelled',
};

/** A tool as people read it: a connection's as `Connection › tool`, the machine's by its name. */
export function toolWords(record: Pick<ActivityRecord, 'tool' | 'connection'>): string {
  return record.connection ? `${record.connection.name} › ${record.connection.tool}` : record.tool;
}

/** A failure as people read it: no error code before it (agents get that), a connection's tool by its name. */
export function plainError(record: Pick<ActivityRecord, 'tool' | 'connection'> & { error: string }): string {
  return record.error.replace(/^err[A-Z][A-Za-z]*:\s*/, '').replaceAll(`"${record.tool}"`, `“${toolWords(record)}”`);
}

/** How much of a failure the table shows before "Show all": about two lines. */
export const SHORT_ERROR_CHARS = 120;

/** The start of a long failure, cut at a word. */
export function shortError(text: string): string {
  if (text.length <= SHORT_ERROR_CHARS) return text;
  const cut = text.slice(0, SHORT_ERROR_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${space > SHORT_ERROR_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}
