/** The OAuth error codes this authorization server answers with (RFC 6749 §4.1.2.1 and §5.2, RFC 8707 §2). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_grant'
  | 'invalid_target'
  | 'invalid_client'
  | 'invalid_client_metadata'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error';

/**
 * A request to the authorization server is refused. `code` is the OAuth error code; the message is
 * safe to send to the client (it never holds a code or a token) and says what to do.
 */
export class OAuthServerError extends Error {
  override readonly name = 'OAuthServerError';
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** An approval names a sign-in request that does not exist, was answered already or expired. */
export class SignInRequestError extends Error {
  override readonly name = 'SignInRequestError';
  constructor(
    message: string,
    /** 404 for an unknown code, 409 for one answered or expired. */
    readonly status: 404 | 409,
  ) {
    super(message);
  }
}

/** No signed-in client has that id. */
export class UnknownClientError extends Error {
  override readonly name = 'UnknownClientError';
}
