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

interface Target {
  base: string;
  headers: Record<string, string>;
}

let target: Promise<Target> | undefined;

/** Same origin with the login cookie in a browser; the preload's base URL and admin token in the desktop window. */
function resolveTarget(): Promise<Target> {
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

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const { base, headers } = await resolveTarget();
  let response: Response;
  try {
    response = await fetch(`${base}/api${path}`, {
      method,
      credentials: 'same-origin',
      // Also on body-less changes: the server takes a change by cookie only with this type, which a page of another site cannot send.
      headers: { ...headers, ...((body !== undefined || method !== 'GET') && { 'Content-Type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError('The app’s server cannot be reached. Check that it is running, then try again.', 0);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = (json as { error?: { message?: string; code?: string } & Record<string, unknown> } | undefined)?.error;
    throw new ApiError(error?.message ?? `The server answered ${response.status}. Try again.`, response.status, error?.code, error ?? {});
  }
  return json as T;
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
