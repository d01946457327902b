import type { UpstreamProblem } from './upstream-problem.js';

// Apart from the upstream client, so that what only tells errors apart does not load the MCP SDK's client.
/** The upstream could not be reached or answered nonsense; only this connection's tools are affected. */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';
  constructor(
    readonly connection: string,
    readonly problem: UpstreamProblem,
    message: string,
    options?: { cause?: unknown; challenge?: string },
  ) {
    super(message, options);
    this.challenge = options?.challenge;
  }

  /** The `WWW-Authenticate` header of the server's 401 that asked for a sign-in: what the sign-in asks for. */
  readonly challenge: string | undefined;
}
