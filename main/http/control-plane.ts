import { existsSync } from 'node:fs';
import type { HostStatus } from '../../common/api/host-status.js';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from 'express';
import { ZodError, type z } from 'zod';
import { openAnswer } from '../../common/api/server.js';
import { ClientEntryExistsError } from '../connections/client-configs/client-config-errors.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import type { Services } from '../services.js';
import { OwnAppRequiredError } from '../connections/upstream-oauth/errors.js';
import { userError } from '../user-errors.js';
import { oauthCallback } from './upstream-oauth-callback.js';
import { apiRoutes } from './api-routes.js';
import { allowedHostNames, hostAndOriginGuard } from './guards.js';
import { mediaType } from '../network/media-type.js';
import { firstScreenOf } from './first-screen.js';
import { pageFiles } from './page-files.js';

export const SESSION_COOKIE = 'pw_session';

export interface ControlPlaneOptions {
  /** Folder of the built page, served at /. */
  pageDir: string;
  host: HostControl;
}

/** What the page can ask of the agent endpoint. */
export interface HostControl {
  status(): HostStatus;
  /** How many MCP sessions agents have open now. */
  agentSessions(): number;
  start(): Promise<unknown>;
  stop(): Promise<void>;
  /** The desktop app shows its window for `open`; headless, there is none and a login link is made instead. */
  showWindow?: () => void;
}

/**
 * The page, its API and sign-in callbacks, on loopback only: the person who runs the app manages
 * connections, secrets and access here. Callers: the desktop window (admin token) and a browser that
 * opened a login link (cookie), nobody else: agents run on this machine and could reach this port,
 * so neither their tokens nor any JWT is taken here, whatever it names.
 */
export function controlPlane(services: Services, options: ControlPlaneOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(hostAndOriginGuard(allowedHostNames('127.0.0.1', []), []));
  app.use(securityHeaders);

  app.get('/login', (req, res) => {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const session = services.admin.redeem(token);
    if (!session) {
      res
        .status(401)
        .type('text/plain')
        .send('This login link was already used or has expired. For a fresh one, run "persona-mcp-workspace open" on this machine.');
      return;
    }
    // The token leaves the address bar with the redirect; the cookie never reaches scripts.
    res.cookie(SESSION_COOKIE, session, { httpOnly: true, sameSite: 'strict', path: '/' });
    res.redirect(303, '/');
  });

  app.get('/oauth/callback', oauthCallback(services));

  // `persona-mcp-workspace open` (the owner's credential, from the state dir): the window, or a fresh login link.
  app.post('/api/open', ownerOnly(services), (_req, res) => {
    if (options.host.showWindow) {
      options.host.showWindow();
      res.json({ window: true } satisfies z.input<typeof openAnswer>);
      return;
    }
    const token = services.admin.createLoginToken();
    res.json({ url: `${services.controlUrl}/login?token=${token}`, expiresInSeconds: services.admin.loginTtlMs / 1000 } satisfies z.input<
      typeof openAnswer
    >);
  });
  app.use('/api', express.json({ limit: API_BODY_LIMIT }), ownerOnly(services), apiRoutes(services, options.host));

  if (existsSync(options.pageDir)) {
    // The signed-in owner's index carries the first screen, its data and its HTML; anyone else's is the file as built.
    const firstScreen = (req: Request) =>
      services.admin.isSession(cookie(req.headers.cookie, SESSION_COOKIE)) ? firstScreenOf(services) : undefined;
    app.use(pageFiles(options.pageDir, { firstScreen }));
  } else {
    app.get('/', (_req, res) => {
      res.type('text/plain').send('You are signed in. The page is not built in this copy: run "npm run build", then reload.');
    });
  }
  app.use('/api', (_req, res) => {
    res.status(404).json({ error: { message: 'No such API route.' } });
  });
  app.use(apiErrors(services.log));
  return app;
}

/** Lets the owner through as `local` (res.locals.person), or answers 401. */
function ownerOnly(services: Services): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    const bearer = header && /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (bearer && services.admin.isAdminToken(bearer)) {
      res.locals.person = LOCAL_PERSON;
      next();
      return;
    }
    if (services.admin.isSession(cookie(req.headers.cookie, SESSION_COOKIE))) {
      // A browser sends the cookie with any request, even one a page of another site makes; such a
      // page can POST a form, but not with a JSON Content-Type (that needs CORS, which is never granted).
      if (!SAFE_METHODS.has(req.method) && mediaType(req.headers['content-type']) !== 'application/json') {
        res.status(403).json({
          error: {
            message:
              'Send changes with Content-Type: application/json (also when there is no body): requests a page of another site could forge are refused.',
          },
        });
        return;
      }
      res.locals.person = LOCAL_PERSON;
      next();
      return;
    }
    const message = header
      ? "The page's API takes only the desktop app's own credential or a browser session from a login link; agent tokens and JWTs work on the MCP endpoint only."
      : 'Sign in first: run "persona-mcp-workspace open" on this machine; it prints a fresh one-time link to this page (and opens it in your browser where $BROWSER is set).';
    res.status(401).json({ error: { message } });
  };
}

function cookie(header: string | undefined, name: string): string {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return '';
}

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy':
      "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
  next();
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The largest request body the page's API takes. */
const API_BODY_LIMIT = '256kb';

function apiErrors(log: (line: string) => void): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    if (res.headersSent) return;
    if (error instanceof ZodError) {
      const issue = error.issues[0];
      res.status(400).json({ error: { message: `${issue?.path.join('.') || 'The request'}: ${issue?.message ?? 'invalid'}.` } });
      return;
    }
    const known = userError(error);
    if (known) {
      // The page opens the own-OAuth-app panel, showing the redirect URL to register at the provider;
      // or offers to replace a client's entry of that name.
      const code =
        error instanceof OwnAppRequiredError
          ? { code: 'own_app_required', redirect_url: error.redirectUrl }
          : error instanceof ClientEntryExistsError
            ? { code: 'entry_exists' }
            : {};
      res.status(known.status).json({ error: { message: known.message, ...code } });
      return;
    }
    // express.json's own refusals, in words a person can act on.
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      res.status(413).json({
        error: { message: `The request is larger than the ${API_BODY_LIMIT} the API accepts: send less (a shorter SKILL.md, say).` },
      });
      return;
    }
    if (type === 'entity.parse.failed') {
      res
        .status(400)
        .json({ error: { message: 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.' } });
      return;
    }
    const status = (error as { status?: number }).status;
    if (status && status < 500) {
      res.status(status).json({ error: { message: (error as Error).message } });
      return;
    }
    log(`API request failed: ${(error as Error).stack ?? String(error)}`);
    res.status(500).json({ error: { message: 'Something went wrong on the server. The server log has the details.' } });
  };
}
