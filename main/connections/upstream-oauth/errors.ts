import { OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { ConnectionIdentity } from '../../secrets/connection-secrets.js';
import { inertLine } from '../upstream-text.js';

// Every message here is shown to a person or an agent. None contains a token, code, verifier,
// state or client secret: text that comes from elsewhere goes through `describeFailure`.

/** The provider cannot be signed in to safely (no PKCE S256) or at all (no metadata); nothing was stored. */
export class SignInUnsupportedError extends Error {
  override readonly name = 'SignInUnsupportedError';
}

/** The provider offers no way for this app to register: the person must create their own OAuth app. */
export class OwnAppRequiredError extends Error {
  override readonly name = 'OwnAppRequiredError';
  constructor(
    message: string,
    /** The redirect URL to enter in the provider's app settings. */
    readonly redirectUrl: string,
  ) {
    super(message);
  }
}

/** A sign-in answer that does not belong to a live sign-in started here; nothing was stored. */
export class SignInStateError extends Error {
  override readonly name = 'SignInStateError';
}

/** The person (or the provider) refused the sign-in at the provider. */
export class SignInDeniedError extends Error {
  override readonly name = 'SignInDeniedError';
}

/** The sign-in could not be started or finished: the provider was unreachable or refused a request. */
export class SignInFailedError extends Error {
  override readonly name = 'SignInFailedError';
}

/** The connection has no usable login (never signed in, or the provider ended it): sign in again. */
export class SignInRequiredError extends Error {
  override readonly name = 'SignInRequiredError';
  constructor(
    readonly connection: ConnectionIdentity,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The server refused the login for lack of scope (403 insufficient_scope): the owner must approve
 * wider access by signing in again ('sign-in'), or, after the bounded step-ups, signing in no
 * longer helps ('key-refused').
 */
export class StepUpRequiredError extends Error {
  override readonly name = 'StepUpRequiredError';
  constructor(
    readonly connection: ConnectionIdentity,
    readonly problem: 'sign-in' | 'key-refused',
    message: string,
  ) {
    super(message);
  }
}

/** A refresh failed for a passing reason (network, provider error): the login is kept and tried again at next use. */
export class TokenRefreshError extends Error {
  override readonly name = 'TokenRefreshError';
  constructor(
    readonly connection: ConnectionIdentity,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What went wrong in a request to a provider, in one inert line, without any of `secrets` (the values
 * the request carried) even if the provider echoed them back.
 */
export function describeFailure(error: unknown, secrets: Array<string | undefined>): string {
  let text: string;
  if (error instanceof ServerError) {
    // The SDK puts a non-OAuth error body after "Raw body:"; the status before it is enough.
    text = error.message.replace(/\s*(Invalid OAuth error response|Raw body):[\s\S]*$/, '') || 'the provider answered with an error';
  } else if (error instanceof OAuthError) {
    text = error.message ? `${error.errorCode}: ${error.message}` : error.errorCode;
  } else if (error instanceof Error) {
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    text = typeof code === 'string' ? `${error.message} (${code})` : error.message;
  } else {
    text = String(error);
  }
  // The provider's words are shown on the page and the terminal and told to agents: inert, like all an upstream
  // sends. Made inert before redaction (removing an escape sequence cannot join a secret back together),
  // redacted before it is cut (no part of a secret survives at the cut).
  return inertLine(redact(inertLine(text, Infinity), secrets), 300) || 'no reason given';
}

/** `text` with every secret value (and its URL-encoded form) replaced. */
export function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[redacted]');
  }
  return out;
}
