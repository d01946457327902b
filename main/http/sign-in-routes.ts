import { Router, type Request, type Response } from 'express';
import * as z from 'zod';
import type { Approvals } from '../auth/oauth-server/approvals.js';
import { NotJsonError } from './not-json-error.js';

const approveBody = z.object({ workspace_path: z.string().max(4096).optional() }).strict();
const emptyBody = z.object({}).strict();

/**
 * Agent sign-ins on the page's API (under /api/agent-access): the requests waiting for the owner, their answers, and the
 * clients signed in. Only the person who runs the app answers; every change must come as JSON, which
 * a page on another site cannot send here without a preflight this server never grants (CSRF).
 */
export function signInRoutes(approvals: Approvals, localOnly: (res: Response) => void): Router {
  const router = Router();
  router.use((req, res, next) => {
    localOnly(res);
    if (req.method !== 'GET' && !req.is('application/json')) throw new NotJsonError('Send this request as JSON (Content-Type: application/json).');
    next();
  });
  const code = (req: Request) => String(req.params.code);

  router.get('/sign-ins', async (_req, res) => {
    res.json({ requests: await approvals.pending() });
  });
  router.post('/sign-ins/:code/approve', async (req, res) => {
    const body = approveBody.parse(req.body);
    res.json({ approved: await approvals.approve(code(req), 'local', body.workspace_path) });
  });
  router.post('/sign-ins/:code/deny', async (req, res) => {
    emptyBody.parse(req.body);
    res.json({ denied: await approvals.deny(code(req), 'local') });
  });

  router.get('/clients', async (_req, res) => {
    res.json({ clients: await approvals.clients() });
  });
  router.post('/clients/:id/revoke', async (req, res) => {
    emptyBody.parse(req.body);
    res.json({ revoked: await approvals.revoke(String(req.params.id)) });
  });
  return router;
}
