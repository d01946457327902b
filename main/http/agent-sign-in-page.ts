import type { SignInRequest } from '../auth/agent-oauth/oauth-state.js';
import { PRODUCT_NAME } from '../version.js';

/** How often the waiting page asks again. */
export const WAIT_REFRESH_SECONDS = 2;

/**
 * The page a client's browser waits on while the machine's owner decides. It approves nothing: it
 * shows who asks, where the answer goes, the place asked and the code the owner will see, and
 * reloads itself until there is an answer (no script, so it works under the strictest policy).
 */
export function waitingPage(request: SignInRequest): string {
  const place = request.askedPlace ? `the place ${request.askedPlace}` : 'a place the owner picks';
  return page(
    'Waiting for approval',
    `<meta http-equiv="refresh" content="${WAIT_REFRESH_SECONDS}">`,
    `<h1>Waiting for the owner of this machine</h1>
<p><strong>${escapeHtml(request.clientName)}</strong> asks to work on this machine in ${escapeHtml(place)}.</p>
<dl>
<dt>Sends the answer to</dt><dd><code>${escapeHtml(request.redirectUri)}</code></dd>
<dt>Code</dt><dd class="code">${escapeHtml(request.code)}</dd>
</dl>
<p>The owner approves or denies this in ${PRODUCT_NAME} (Agent access), or on the machine with
<code>${PRODUCT_NAME} approve ${escapeHtml(request.code)}</code>. Check that they see the same code.</p>
<p class="quiet">This page follows the answer by itself. Unanswered requests are refused after 10 minutes.</p>`,
  );
}

/** A sign-in that can no longer continue here, and why. */
export function endedPage(message: string): string {
  return page('Sign-in ended', '', `<h1>This sign-in has ended</h1>\n<p>${escapeHtml(message)}</p>`);
}

/** A sign-in refused before the owner is asked (an unknown client, an answer address it did not register): nothing is sent anywhere. */
export function refusedPage(message: string): string {
  return page(
    'Sign-in refused',
    '',
    `<h1>This sign-in cannot start</h1>\n<p>${escapeHtml(message)}</p>\n<p class="quiet">Nothing was sent to the app and the owner of this machine was not asked.</p>`,
  );
}

function page(title: string, head: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${head}<title>${escapeHtml(title)} · ${PRODUCT_NAME}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#222}
dt{color:#666;font-size:13px}dd{margin:0 0 .8rem}code{word-break:break-all}.code{font:600 28px/1.2 ui-monospace,monospace;letter-spacing:.1em}.quiet{color:#666;font-size:13px}</style>
</head><body>
${body}
</body></html>
`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
