import * as z from 'zod';

// A connection's machine login (the OAuth client-credentials grant) as the API takes and shows it:
// the page, the CLI and the server use these.

/** The signing algorithms a private key may use for its JWT assertions (RFC 7518's asymmetric ones). */
export const JWT_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'] as const;
export const jwtAlgorithm = z.enum(JWT_ALGORITHMS);
export type JwtAlgorithm = z.infer<typeof jwtAlgorithm>;

/** The algorithm a private key signs with when none is named. */
export const DEFAULT_JWT_ALGORITHM: JwtAlgorithm = 'ES256';

/**
 * `client_credentials` of PATCH /api/mcp/place/:name: the client ID with a client secret (sent with
 * HTTP Basic), or with a PKCS #8 private key (PEM) that signs a JWT assertion for each token
 * request (private_key_jwt). Null goes back to signing in in the browser.
 */
export const clientCredentialsInput = z.union([
  z.object({ client_id: z.string().min(1).max(500), client_secret: z.string().min(1).max(2000) }).strict(),
  z
    .object({
      client_id: z.string().min(1).max(500),
      private_key: z.string().min(1).max(20_000),
      signing_algorithm: jwtAlgorithm.optional(),
    })
    .strict(),
]);
export type ClientCredentialsInput = z.infer<typeof clientCredentialsInput>;

/** How a connection shows its machine login: the client ID and how it proves itself, never the secret or key. */
export const clientCredentialsView = z.object({ clientId: z.string(), method: z.enum(['client_secret', 'private_key_jwt']) });
export type ClientCredentialsView = z.infer<typeof clientCredentialsView>;

/** How each method reads, on the page and in the CLI. */
export const credentialsMethodWords: Record<ClientCredentialsView['method'], string> = {
  client_secret: 'with a client secret',
  private_key_jwt: 'with a private key',
};
