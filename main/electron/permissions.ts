import { originOf } from './window.js';

// The window's permission handlers as one pure decision, so what the page may use is tested without
// Electron. The page is web content served over HTTP: it gets the one permission its Copy buttons
// need, and nothing else, and only while it is the app's own page in a top frame.

/**
 * The permissions the app's page may use. `clipboard-sanitized-write` is what Chromium asks for
 * `navigator.clipboard.writeText` (a check first, then a request when the check says no).
 */
export const PAGE_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export interface PermissionAsk {
  permission: string;
  /** The origin (a check's requestingOrigin) or the URL (a request's requestingUrl) of the frame asking. */
  requesting: string | undefined;
  /** Whether the frame asking is its page's top frame. */
  isMainFrame: boolean;
  /** A check from a cross-origin sub frame names the frame embedding it. */
  embeddingOrigin?: string;
}

/**
 * Whether to grant a permission check or request: only a permission the page needs, asked by the
 * top frame of a page on the control plane's own origin (scheme, host and port, nothing else).
 */
export function permissionAllowed(ask: PermissionAsk, controlOrigin: string | undefined): boolean {
  if (!controlOrigin || !PAGE_PERMISSIONS.has(ask.permission)) return false;
  if (!ask.isMainFrame || ask.embeddingOrigin !== undefined) return false;
  if (ask.requesting === undefined || !exactOrigin(ask.requesting)) return false;
  return originOf(ask.requesting) === controlOrigin;
}

/**
 * The URL parser forgives a lot (`http://user@127.0.0.1:9101` has the origin `http://127.0.0.1:9101`):
 * a requesting address with credentials in it is never the app's page, so it is refused outright.
 */
function exactOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
