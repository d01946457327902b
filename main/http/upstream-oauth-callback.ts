import type { RequestHandler } from 'express';
import type { Services } from '../services.js';
import { userError } from '../user-errors.js';

/**
 * `/oauth/callback`: where the provider sends the browser back after a sign-in. No caller to
 * identify: the single-use state ties the answer to the sign-in begun here. The page says it
 * worked, or exactly why not; in a sign-in group, the browser goes on to the next service first.
 */
export function oauthCallback(services: Services): RequestHandler {
  return async (req, res) => {
    const answer = Object.fromEntries(Object.entries(req.query).filter((e): e is [string, string] => typeof e[1] === 'string'));
    let outcome: { ok: true; displayName: string } | { ok: false; message: string; status: number };
    try {
      outcome = { ok: true, displayName: (await services.connections.finishSignIn(answer)).displayName };
    } catch (error) {
      const known = userError(error);
      if (!known) services.log(`Sign-in failed: ${(error as Error).stack ?? String(error)}`);
      outcome = {
        ok: false,
        message: known?.message ?? 'Something went wrong on the server. The server log has the details.',
        status: known?.status ?? 500,
      };
    }
    const step = services.connections.continueSignIns(answer.state, outcome.ok ? { ok: true } : { ok: false, message: outcome.message });
    // It is a URL this server made, for the next service of the group.
    if (step && 'next' in step) {
      res.redirect(303, step.next);
      return;
    }
    const status = outcome.ok ? 200 : outcome.status;
    if (step && step.outcomes.length > 1) {
      const failed = step.outcomes.filter((o) => !o.ok).length;
      const title = failed === 0 ? 'Signed in' : failed === step.outcomes.length ? 'Sign-in failed' : 'Some sign-ins failed';
      const lines = step.outcomes.map((o) => (o.ok ? `${o.displayName}: signed in.` : `${o.displayName}: not signed in. ${o.message}`));
      const last =
        failed === 0
          ? "Their tools are ready for this place's agents. You can close this window."
          : 'Sign in to the ones that failed from the Connections page. You can close this window.';
      res
        .status(status)
        .type('html')
        .send(resultPage(title, [...lines, last]));
      return;
    }
    if (outcome.ok) {
      res
        .type('html')
        .send(
          resultPage('Signed in', [
            `You are signed in to ${outcome.displayName}. Its tools are ready for this place's agents. You can close this window.`,
          ]),
        );
    } else {
      res
        .status(status)
        .type('html')
        .send(resultPage('Sign-in failed', [outcome.message]));
    }
  };
}

function resultPage(title: string, paragraphs: string[]): string {
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)} · Persona Workspace</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1.5rem;color:#1f2328}@media(prefers-color-scheme:dark){body{background:#16181d;color:#e6e8eb}}h1{font-size:1.4rem}p{margin:0 0 .6rem}</style>
</head><body><main><h1>${escape(title)}</h1>${paragraphs.map((p) => `<p>${escape(p)}</p>`).join('')}</main></body></html>`;
}
