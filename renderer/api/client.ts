import type * as z from 'zod';
import { errorAnswer } from '../../common/api/errors.js';
import type { DesktopApi } from '../../common/ipc.js';

declare global {
  interface Window {
    /** The desktop shell's preload; a browser has none. */
    personaDesktop?: DesktopApi;
  }
}

/** An API answer that was not a success: the API's own message, and its code when it has one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface Target {
  base: string;
  headers: Record<string, string>;
}

let target: Promise<Target> | undefined;

/** Same origin with the login cookie in a browser; the preload's base URL and admin token in the desktop window. */
export function resolveTarget(): Promise<Target> {
  target ??= (async (): Promise<Target> => {
    const desktop = window.personaDesktop;
    if (desktop) {
      const { apiBase, adminToken } = await desktop.config();
      return { base: apiBase.replace(/\/+$/, ''), headers: { Authorization: `Bearer ${adminToken}` } };
    }
    return { base: '', headers: {} };
  })();
  return target as Promise<Target>;
}

/**
 * Calls the API and checks its answer against the contract's schema (common/api): an answer of
 * another shape is an error the page shows, never data it trusts. `answer` null: no body (204).
 */
export async function api<S extends z.ZodType>(method: string, path: string, answer: S, body?: unknown): Promise<z.infer<S>>;
export async function api(method: string, path: string, answer: null, body?: unknown): Promise<void>;
export async function api(method: string, path: string, answer: z.ZodType | null, body?: unknown): Promise<unknown> {
  const response = await request(method, path, body);
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const refusal = errorAnswer.safeParse(json);
    if (!refusal.success) throw new ApiError(`The server answered ${response.status}. Try again.`, response.status);
    const { message, code, ...details } = refusal.data.error;
    throw new ApiError(message, response.status, code, details);
  }
  if (answer === null) return undefined;
  const checked = answer.safeParse(json);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new ApiError(
      `The server's answer to ${method} ${path.split('?')[0]} is not what this page expects (${issue?.path.join('.') || 'the answer'}: ${issue?.message ?? 'invalid'}). Reload the page; if it stays, the page and the server are of different versions.`,
      response.status,
    );
  }
  return checked.data;
}

async function request(method: string, path: string, body?: unknown): Promise<Response> {
  const { base, headers } = await resolveTarget();
  try {
    return await fetch(`${base}/api${path}`, {
      method,
      credentials: 'same-origin',
      // Also on body-less changes: the server takes a change by cookie only with this type, which a page of another site cannot send.
      headers: { ...headers, ...((body !== undefined || method !== 'GET') && { 'Content-Type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError('The app’s server cannot be reached. Check that it is running, then try again.', 0);
  }
}

/** Opens a sign-in page: through the desktop shell when there is one, else a new browser tab. */
export function openExternal(url: string): void {
  const desktop = window.personaDesktop;
  if (desktop) {
    void desktop.openExternal(url);
    return;
  }
  window.open(url, '_blank', 'noopener,noreferrer');
}

export function query(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}
