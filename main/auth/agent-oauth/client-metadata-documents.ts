import * as z from 'zod';
import { OAuthServerError } from './errors.js';
import type { RegisteredClient } from './oauth-state.js';
import { checkRedirectUri } from './redirect-uri.js';

/** A metadata document larger than this is refused: a client's name and redirect URIs fit in far less. */
export const MAX_DOCUMENT_BYTES = 64 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;
/** A fetched document is used this long before it is fetched again. */
export const DOCUMENT_TTL_MS = 10 * 60_000;

const documentSchema = z.object({
  client_id: z.string(),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  redirect_uris: z.array(z.string()).min(1).max(10),
});

/**
 * Clients that name themselves by a URL (client ID metadata documents): the client_id is an https
 * URL whose document says the client's name and redirect URIs. Fetched through the same network
 * guard as connections (public https only, unless private networks are allowed for development),
 * within a size and time limit, and cached.
 */
export class ClientMetadataDocuments {
  private readonly cache = new Map<string, { client: RegisteredClient; until: number }>();

  constructor(
    private readonly fetch: (url: string, init?: RequestInit) => Promise<Response>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a client_id names a metadata document rather than a registered client. */
  static names(clientId: string): boolean {
    return /^https?:\/\//i.test(clientId);
  }

  async get(clientId: string): Promise<RegisteredClient> {
    const cached = this.cache.get(clientId);
    if (cached && cached.until > this.now()) return cached.client;
    const client = await this.load(clientId);
    if (this.cache.size >= 200) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(clientId, { client, until: this.now() + DOCUMENT_TTL_MS });
    return client;
  }

  private async load(clientId: string): Promise<RegisteredClient> {
    const refuse = (why: string): never => {
      throw new OAuthServerError('invalid_client', `The client's metadata document ${clientId.slice(0, 200)} cannot be used: ${why}.`);
    };
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return refuse('its client_id is not a URL');
    }
    if (url.pathname === '/' || url.hash) refuse('the URL needs a path and no fragment');
    let text: string;
    try {
      const response = await this.fetch(url.href, {
        redirect: 'error',
        headers: { Accept: 'application/json' },
        signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS),
      });
      if (!response.ok) refuse(`it answered HTTP ${response.status}`);
      text = await readLimited(response, MAX_DOCUMENT_BYTES);
    } catch (error) {
      if (error instanceof OAuthServerError) throw error;
      return refuse(
        (error as Error).name === 'TimeoutError'
          ? `it did not answer within ${DOCUMENT_TIMEOUT_MS / 1000} seconds`
          : (error as Error).message,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return refuse('it is not JSON');
    }
    const parsed = documentSchema.safeParse(json);
    if (!parsed.success) return refuse('it needs client_id and 1 to 10 redirect_uris');
    if (parsed.data.client_id !== clientId) refuse('its client_id is not its own URL');
    for (const uri of parsed.data.redirect_uris) checkRedirectUri(uri);
    return {
      client_id: clientId,
      client_name: parsed.data.client_name?.replace(/\p{C}/gu, '').trim().slice(0, 80) || url.host,
      ...(parsed.data.client_uri && { client_uri: parsed.data.client_uri.slice(0, 500) }),
      redirect_uris: parsed.data.redirect_uris,
      client_id_issued_at: Math.floor(this.now() / 1000),
      registeredAt: new Date(this.now()).toISOString(),
    };
  }
}

/** The body as text, refused as soon as it passes `max` bytes (never read whole into memory). */
async function readLimited(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > max) {
    await response.body?.cancel();
    throw new OAuthServerError('invalid_client', `The client's metadata document is larger than ${max / 1024} KiB.`);
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new OAuthServerError('invalid_client', `The client's metadata document is larger than ${max / 1024} KiB.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
