// A type-only import: erased at build time, so this module runs (and is tested) under plain Node.
import type { BrowserWindowConstructorOptions } from 'electron';

/**
 * The one window's options. The page is served over HTTP by the host (the same page a browser gets),
 * so it is treated as untrusted web content: isolated, sandboxed, no Node, web security on.
 */
export function windowOptions(options: { preload: string; show: boolean; icon?: string }): BrowserWindowConstructorOptions {
  return {
    title: 'Persona Workspace',
    width: 1100,
    height: 760,
    minWidth: 720,
    minHeight: 480,
    show: options.show,
    ...(options.icon !== undefined && { icon: options.icon }),
    autoHideMenuBar: true,
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      // Dropping a file on the window would otherwise navigate it away from the page.
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    },
  };
}

export type NavigationDecision = 'allow' | 'external' | 'deny';

/**
 * What the window does with a navigation or a window.open: the control plane's own pages stay in
 * the window (a reload, the page's own links); a sign-in URL the host produced opens in the system
 * browser (the provider's page must never run inside the app); anything else is refused.
 * `newWindow` is for window.open, which never gets a new app window.
 */
export function navigationDecision(
  url: string,
  context: { controlOrigin: string; signInUrls: SignInUrls; newWindow: boolean },
): NavigationDecision {
  if (context.signInUrls.has(url)) return 'external';
  if (!context.newWindow && originOf(url) === context.controlOrigin) return 'allow';
  return 'deny';
}

/**
 * The sign-in URLs the host produced (its openBrowser option passes each one): the only URLs the
 * app hands to the system browser, so a compromised page cannot make it open arbitrary ones.
 * A sign-in is announced twice, by the host as it begins and by the page that asked for it, so a
 * URL opened moments ago is not opened again: one click, one browser tab.
 */
export class SignInUrls {
  private readonly opened = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly reopenAfterMs = 10_000,
  ) {}

  /** Records a URL the host produced; answers whether it may be opened (http or https only). */
  add(url: string): boolean {
    if (!isHttpUrl(url)) return false;
    if (!this.opened.has(url)) this.opened.set(url, Number.NEGATIVE_INFINITY);
    return true;
  }

  has(url: string): boolean {
    return this.opened.has(url);
  }

  /** Whether to open a recorded URL now (not one opened moments ago); counts it as opened if so. */
  claim(url: string): boolean {
    const last = this.opened.get(url);
    if (last === undefined || this.now() - last < this.reopenAfterMs) return false;
    this.opened.set(url, this.now());
    return true;
  }
}

export function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    // Opaque origins (data:, file:, about:) serialize as the string "null": never a match.
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
