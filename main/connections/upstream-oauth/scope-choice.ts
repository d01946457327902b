import type { OAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Challenge } from './challenge.js';

/** What a sign-in asks for beyond the MCP authorization spec's choice. */
export interface WiderScope {
  /** The wider access a step-up asks for (those granted and those the server asked for). */
  stepUp?: string | undefined;
  /**
   * The scope the connection's last login was granted (OAuthStore's `lastGrantedScope`): a login
   * once widened by a step-up stays that wide through a sign-in again, so the agent's next call is
   * not refused once more for the access its owner already approved.
   */
  granted?: string | undefined;
}

/**
 * The MCP authorization spec's scope selection (2025-11-25): the challenge's scope, else the resource's scopes_supported, with
 * the wider scopes of `wider`; plus offline_access when the authorization server offers it, since
 * without it many servers issue no refresh token and the connection would need a sign-in every hour.
 * A first sign-in has no wider scopes, so it asks for exactly what that spec says.
 */
export function scopeFor(challenge: Challenge, discovery: OAuthServerInfo, wider: WiderScope = {}): string | undefined {
  const chosen = challenge.scope ?? discovery.resourceMetadata?.scopes_supported?.join(' ') ?? '';
  const scopes = [...new Set([chosen, wider.stepUp, wider.granted].flatMap((text) => (text ?? '').split(' ')).filter(Boolean))];
  if (discovery.authorizationServerMetadata?.scopes_supported?.includes('offline_access') && !scopes.includes('offline_access'))
    scopes.push('offline_access');
  return scopes.length > 0 ? scopes.join(' ') : undefined;
}
