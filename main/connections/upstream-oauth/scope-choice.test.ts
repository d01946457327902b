import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OAuthServerInfo } from '@modelcontextprotocol/sdk/client/auth.js';
import { lastGrantedScope, type OAuthRecord } from './oauth-store.js';
import { scopeFor } from './scope-choice.js';

/** What discovery found: the resource's scopes_supported and the authorization server's. */
function discovery(resourceScopes: string[] | undefined, serverScopes: string[] | undefined): OAuthServerInfo {
  return {
    authorizationServerUrl: 'https://as.example',
    authorizationServerMetadata: {
      issuer: 'https://as.example',
      authorization_endpoint: 'https://as.example/auth',
      token_endpoint: 'https://as.example/token',
      response_types_supported: ['code'],
      ...(serverScopes && { scopes_supported: serverScopes }),
    },
    resourceMetadata: { resource: 'https://mcp.example/mcp', ...(resourceScopes && { scopes_supported: resourceScopes }) },
  };
}

const tokens = { access_token: 'at', token_type: 'Bearer', issuer: 'https://as.example' };

describe('scope choice', () => {
  it("a first sign-in asks for the challenge's scope, else scopes_supported, with offline_access when offered", () => {
    const found = discovery(['mcp:read', 'mcp:write'], ['mcp:read', 'mcp:write', 'offline_access']);
    assert.equal(scopeFor({ scope: 'mcp:read' }, found), 'mcp:read offline_access');
    assert.equal(scopeFor({}, found), 'mcp:read mcp:write offline_access');
    assert.equal(scopeFor({}, discovery(['mcp:read'], undefined)), 'mcp:read', 'no offline_access where the server does not offer it');
    assert.equal(scopeFor({}, discovery(undefined, undefined)), undefined, 'no scope parameter at all');
    assert.equal(scopeFor({ scope: 'mcp:read' }, found, { granted: undefined, stepUp: undefined }), 'mcp:read offline_access');
  });

  it('a sign-in again asks for the scope the last login was granted too, once each, with a step-up on top', () => {
    const found = discovery(['mcp:read', 'mcp:write', 'mcp:admin'], ['offline_access']);
    assert.equal(
      scopeFor({ scope: 'mcp:read' }, found, { granted: 'mcp:read mcp:write offline_access' }),
      'mcp:read mcp:write offline_access',
    );
    assert.equal(
      scopeFor({ scope: 'mcp:read' }, found, { stepUp: 'mcp:read mcp:admin', granted: 'mcp:read mcp:write' }),
      'mcp:read mcp:admin mcp:write offline_access',
    );
    assert.equal(scopeFor({}, discovery(undefined, undefined), { granted: 'mcp:write' }), 'mcp:write', 'with nothing else to go by');
  });

  it("the last login's scope: the current login's, else the one a login the provider ended left, else none", () => {
    assert.equal(lastGrantedScope({}), undefined, 'never signed in (or forgotten)');
    assert.equal(lastGrantedScope({ tokens: { ...tokens, scope: 'mcp:read mcp:write' } }), 'mcp:read mcp:write');
    assert.equal(lastGrantedScope({ grantedScope: 'mcp:read mcp:write' }), 'mcp:read mcp:write');
    const record: OAuthRecord = { tokens: { ...tokens, scope: 'mcp:read' }, grantedScope: 'mcp:write' };
    assert.equal(lastGrantedScope(record), 'mcp:read', 'a login replaces what an ended one left');
  });
});
