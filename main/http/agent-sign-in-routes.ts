import { Router, type Request, type Response } from 'express';
import type * as z from 'zod';
import {
  approveBody,
  approvedAnswer,
  deniedAnswer,
  emptyBody,
  waitingAgentSignInsAnswer,
  revokedClientAnswer,
  signedInClientsAnswer,
} from '../../common/api/agent-sign-ins.js';
import type { Approvals } from '../auth/agent-oauth/approvals.js';
import { NotJsonError } from './not-json-error.js';

/**
 * Agent sign-ins on the page's API (under /api/agent-access): the requests waiting for the owner, their answers, and the
 * clients signed in. Only the person who runs the app answers; every change must come as JSON, which
 * a page on another site cannot send here without a preflight this server never grants (CSRF).
 */
export function signInRoutes(approvals: Approvals, localOnly: (res: Response) => void): Router {
  const router = Router();
  router.use((req, res, next) => {
    localOnly(res);
    if (req.method !== 'GET' && !req.is('application/json'))
      throw new NotJsonError('Send this request as JSON (Content-Type: application/json).');
    next();
  });
  const code = (req: Request) => String(req.params.code);

  router.get('/sign-ins', async (_req, res) => {
    res.json({ requests: await approvals.pending() } satisfies z.input<typeof waitingAgentSignInsAnswer>);
  });
  router.post('/sign-ins/:code/approve', async (req, res) => {
    const body = approveBody.parse(req.body);
    res.json({ approved: await approvals.approve(code(req), 'local', body.workspace_path) } satisfies z.input<typeof approvedAnswer>);
  });
  router.post('/sign-ins/:code/deny', async (req, res) => {
    emptyBody.parse(req.body);
    res.json({ denied: await approvals.deny(code(req), 'local') } satisfies z.input<typeof deniedAnswer>);
  });

  router.get('/clients', async (_req, res) => {
    res.json({ clients: await approvals.clients() } satisfies z.input<typeof signedInClientsAnswer>);
  });
  router.post('/clients/:id/revoke', async (req, res) => {
    emptyBody.parse(req.body);
    res.json({ revoked: await approvals.revoke(String(req.params.id)) } satisfies z.input<typeof revokedClientAnswer>);
  });
  return router;
}
