import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { NetworkPolicyError } from '../../network/network-policy-error.js';
import { SignInRequiredError, StepUpRequiredError, TokenRefreshError } from '../upstream-oauth/errors.js';
import { UpstreamAnswerError } from './call-forwarder.js';
import { ListingTooLargeError } from './upstream-listing.js';

/**
 * Why an upstream does not work, in the kinds a person acts on differently:
 * sign-in (the server wants an OAuth login, or the login ended), key-refused (it refused the
 * credentials, or the lack of them), unreachable (DNS, refused, TLS, timeout, dropped, server error),
 * not-mcp (it answers, but not as an MCP server), too-large (its tools take more than a place's tools/list can carry).
 */
export type UpstreamProblem = 'sign-in' | 'key-refused' | 'unreachable' | 'not-mcp' | 'too-large';

/** What the connection sends the server: nothing, an API-key header, or an OAuth access token. */
export type CredentialKind = 'none' | 'header' | 'oauth';

/** The status and `WWW-Authenticate` header of the server's last refusal (401/403). */
export interface Refusal {
  status: number;
  challenge: string | undefined;
}

export interface Diagnosis {
  problem: UpstreamProblem;
  /** The cause in words a person can act on; never a request header. */
  text: string;
}

// Node's TLS failures, by their error codes.
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/** Sorts a failure to reach or use an upstream into a problem, with what to do about it. */
export function diagnose(error: unknown, credentials: CredentialKind, timeoutMs: number, refusal?: Refusal): Diagnosis {
  // The login's own words (sign in again, a refresh that failed) say best what to do.
  if (error instanceof SignInRequiredError || error instanceof TokenRefreshError) return { problem: 'sign-in', text: error.message };
  if (error instanceof StepUpRequiredError) return { problem: error.problem, text: error.message };
  if (error instanceof NetworkPolicyError) return { problem: 'unreachable', text: error.message };
  if (error instanceof ListingTooLargeError) return { problem: 'too-large', text: error.message };
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return {
      problem: 'unreachable',
      text: `it did not answer within ${seconds(timeoutMs)} s (timeout). The server may be down or overloaded; it is checked again shortly.`,
    };
  }
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
    return {
      problem: 'unreachable',
      text: 'it closed the connection before answering. The server may have crashed; it is checked again shortly.',
    };
  }
  if (error instanceof StreamableHTTPError) return httpProblem(error, credentials, refusal);
  if (error instanceof SyntaxError || error instanceof UpstreamAnswerError || isSchemaError(error)) {
    const detail =
      error instanceof UpstreamAnswerError
        ? error.message
        : 'it sent an answer that is not valid MCP (malformed JSON or an unexpected shape).';
    return { problem: 'not-mcp', text: `${detail} Check that the URL is the server's MCP endpoint.` };
  }
  const code = socketCode(error);
  if (code === 'ECONNREFUSED')
    return {
      problem: 'unreachable',
      text: 'the connection was refused. Check that the server is running and the URL (host and port) is right.',
    };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { problem: 'unreachable', text: 'its host name does not resolve (DNS). Check the URL.' };
  if (code && TLS_CODES.test(code))
    return { problem: 'unreachable', text: `its TLS certificate was not accepted (${code}). Check the URL, or the server's certificate.` };
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return { problem: 'unreachable', text: 'connecting to it timed out. Check the URL and the network.' };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return {
      problem: 'unreachable',
      text: 'the connection dropped in the middle of an answer. The server may have crashed; it is checked again shortly.',
    };
  }
  // fetch quotes a header value it refuses, and that value is a credential.
  if (error instanceof TypeError && /header/i.test(error.message)) {
    return { problem: 'key-refused', text: "a header of the request (its credentials) is not valid. Set the connection's API key again." };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { problem: 'unreachable', text: `${message.replace(/\s+/g, ' ').slice(0, 300)}.` };
}

function httpProblem(error: StreamableHTTPError, credentials: CredentialKind, refusal: Refusal | undefined): Diagnosis {
  const status = error.code;
  const challenge = refusal && refusal.status === status ? refusal.challenge : undefined;
  if (status === 401 || status === 403) {
    if (credentials === 'oauth') return { problem: 'sign-in', text: `it refused the login (HTTP ${status}). Sign in again.` };
    if (status === 401 && challenge && /^\s*bearer\b/i.test(challenge)) {
      return { problem: 'sign-in', text: 'it asks for a sign-in (HTTP 401 with an OAuth challenge). Connect it to sign in.' };
    }
    if (credentials === 'header')
      return {
        problem: 'key-refused',
        text: `it refused the API key (HTTP ${status}). Check the secret's value and the header name, then Test again.`,
      };
    return {
      problem: 'key-refused',
      text: `it refused access without credentials (HTTP ${status}). Edit the connection to send an API key header.`,
    };
  }
  if (status !== undefined && status >= 500)
    return {
      problem: 'unreachable',
      text: `it answered HTTP ${status} (a server error). The service may be down; it is checked again shortly.`,
    };
  if (status === -1) return { problem: 'not-mcp', text: `${error.message}. Check that the URL is the server's MCP endpoint.` };
  return {
    problem: 'not-mcp',
    text: `it answered HTTP ${status ?? 'error'}, not as an MCP server. Check that the URL is the server's MCP endpoint.`,
  };
}

/** The SDK checks every answer against its schemas; a failed check is a zod error. */
function isSchemaError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError');
}

/** fetch puts the socket's error in `cause` (sometimes two deep); undici's request API throws it as it is. */
function socketCode(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth += 1) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

function seconds(ms: number): number {
  return Math.max(1, Math.round(ms / 1000));
}
