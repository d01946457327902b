import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture } from '../../../e2e/fixtures/upstream-server.js';
import { asksForSignIn, readChallenge } from './challenge.js';

describe('the probe that asks a server whether it wants a sign-in', () => {
  let upstream: UpstreamFixture;
  before(async () => {
    upstream = await startUpstream();
  });
  after(() => upstream.close());

  it('closes the session it opened at an open server (DELETE)', async () => {
    assert.equal(await asksForSignIn(upstream.url, fetch), false);
    assert.deepEqual(await readChallenge(upstream.url, fetch), {});
    assert.equal(upstream.openSessions(), 0, 'no session left open at the server');
  });

  it('reads a 401 challenge, opening nothing', async () => {
    upstream.setMode('sign-in');
    try {
      assert.equal(await asksForSignIn(upstream.url, fetch), true);
      const challenge = await readChallenge(upstream.url, fetch);
      assert.match(String(challenge.resourceMetadataUrl), /\/\.well-known\/oauth-protected-resource\/mcp$/);
    } finally {
      upstream.setMode('ok');
    }
    assert.equal(upstream.openSessions(), 0);
  });
});
