import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { permissionAllowed, type PermissionAsk } from './permissions.js';

const control = 'http://127.0.0.1:9101';
const ask = (over: Partial<PermissionAsk>): PermissionAsk => ({
  permission: 'clipboard-sanitized-write',
  requesting: control,
  isMainFrame: true,
  ...over,
});

describe('permissionAllowed', () => {
  it("lets the app's own page write the clipboard, as a check (origin) or a request (URL)", () => {
    assert.equal(permissionAllowed(ask({}), control), true);
    assert.equal(permissionAllowed(ask({ requesting: `${control}/` }), control), true);
    assert.equal(permissionAllowed(ask({ requesting: `${control}/#access` }), control), true);
  });

  it("refuses every other permission to the app's own page", () => {
    for (const permission of [
      'clipboard-read',
      'notifications',
      'media',
      'geolocation',
      'openExternal',
      'fullscreen',
      'deprecated-sync-clipboard-read',
      'unknown',
      '',
    ]) {
      assert.equal(permissionAllowed(ask({ permission }), control), false, permission);
    }
  });

  it('refuses the clipboard to any other origin, lookalikes included', () => {
    for (const requesting of [
      'http://127.0.0.1:9100', // the agent endpoint's port
      'http://127.0.0.1:91011',
      'https://127.0.0.1:9101',
      'http://localhost:9101',
      'http://[::1]:9101',
      'http://127.0.0.1.evil.example:9101',
      'http://user@127.0.0.1:9101',
      'http://user:pass@127.0.0.1:9101/',
      'http://evil.example/?http://127.0.0.1:9101',
      'file:///home/me/page.html',
      'file://',
      'data:text/html,hi',
      'about:blank',
      'null',
      '',
      'not a url',
    ]) {
      assert.equal(permissionAllowed(ask({ requesting }), control), false, requesting);
    }
    assert.equal(permissionAllowed(ask({ requesting: undefined }), control), false, 'no requesting address');
  });

  it("refuses a sub frame, even of the app's own origin", () => {
    assert.equal(permissionAllowed(ask({ isMainFrame: false }), control), false);
    assert.equal(permissionAllowed(ask({ embeddingOrigin: 'https://evil.example' }), control), false);
  });

  it("refuses everything before the page's origin is known", () => {
    assert.equal(permissionAllowed(ask({}), undefined), false);
  });
});
