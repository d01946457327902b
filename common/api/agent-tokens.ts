import * as z from 'zod';

// The app's own agent tokens, as the API gives and takes them (/api/tokens) and `token list` shows them.

/** What is kept about a token: never the token itself. */
export const agentToken = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().optional(),
  /** The place the token is bound to; absent: the agent names one in the URL, else This machine. */
  workspacePath: z.string().optional(),
  revokedAt: z.string().optional(),
  /** The token's own tool search setting; absent follows its place (auto). */
  toolSearch: z.enum(['on', 'off']).optional(),
});
export type AgentToken = z.infer<typeof agentToken>;

/** The answer to a creation: the one time the token is shown. */
export const createdToken = agentToken.extend({ token: z.string() });
export type CreatedToken = z.infer<typeof createdToken>;

/** POST /api/tokens; `expires`: `<n>m|h|d` or `never`. */
export const tokenBody = z.object({ name: z.string(), expires: z.string().optional(), workspace_path: z.string().optional() }).strict();

export const tokensAnswer = z.object({ tokens: z.array(agentToken) });
export const createdTokenAnswer = z.object({ token: createdToken });
export const revokedTokenAnswer = z.object({ revoked: agentToken });
export const tokenAnswer = z.object({ token: agentToken });
