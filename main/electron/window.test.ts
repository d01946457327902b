import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { navigationDecision, originOf, SignInUrls, windowOptions } from './window.js';

describe('windowOptions', () => {
  it('isolates and sandboxes the page, with no Node and web security on', () => {
    const options = windowOptions({ preload: '/app/dist/preload/index.cjs', show: false });
    assert.equal(options.show, false);
    assert.deepEqual(
      {
        preload: options.webPreferences?.preload,
        contextIsolation: options.webPreferences?.contextIsolation,
        sandbox: options.webPreferences?.sandbox,
        nodeIntegration: options.webPreferences?.nodeIntegration,
        nodeIntegrationInWorker: options.webPreferences?.nodeIntegrationInWorker,
        nodeIntegrationInSubFrames: options.webPreferences?.nodeIntegrationInSubFrames,
        webSecurity: options.webPreferences?.webSecurity,
        allowRunningInsecureContent: options.webPreferences?.allowRunningInsecureContent,
        webviewTag: options.webPreferences?.webviewTag,
        navigateOnDragDrop: options.webPreferences?.navigateOnDragDrop,
      },
      {
        preload: '/app/dist/preload/index.cjs',
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        nodeIntegrationInSubFrames: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
        navigateOnDragDrop: false,
      },
    );
  });
});

describe('navigationDecision', () => {
  const controlOrigin = 'http://127.0.0.1:9101';
  const signIn = 'https://auth.example.com/authorize?client_id=c&state=s';
  const urls = () => {
    const set = new SignInUrls();
    set.add(signIn);
    return set;
  };

  it("keeps the control plane's own pages in the window", () => {
    assert.equal(navigationDecision('http://127.0.0.1:9101/', { controlOrigin, signInUrls: urls(), newWindow: false }), 'allow');
    assert.equal(navigationDecision('http://127.0.0.1:9101/api/x#y', { controlOrigin, signInUrls: urls(), newWindow: false }), 'allow');
  });

  it('sends a sign-in URL the host produced to the system browser, as a navigation or a new window', () => {
    assert.equal(navigationDecision(signIn, { controlOrigin, signInUrls: urls(), newWindow: false }), 'external');
    assert.equal(navigationDecision(signIn, { controlOrigin, signInUrls: urls(), newWindow: true }), 'external');
  });

  it('refuses every other address, and every new window of its own origin', () => {
    for (const url of [
      'https://auth.example.com/authorize?client_id=c&state=other',
      'http://127.0.0.1:9100/mcp',
      'http://localhost:9101/',
      'https://127.0.0.1:9101/',
      'file:///etc/passwd',
      'data:text/html,hi',
      'javascript:alert(1)',
      'not a url',
    ]) {
      assert.equal(navigationDecision(url, { controlOrigin, signInUrls: urls(), newWindow: false }), 'deny', url);
    }
    assert.equal(navigationDecision('http://127.0.0.1:9101/', { controlOrigin, signInUrls: urls(), newWindow: true }), 'deny');
  });
});

describe('SignInUrls', () => {
  it('records http and https URLs only', () => {
    const urls = new SignInUrls();
    assert.equal(urls.add('https://a.example/authorize'), true);
    assert.equal(urls.add('http://127.0.0.1:4000/authorize'), true);
    for (const url of ['file:///x', 'javascript:alert(1)', 'ms-settings:', 'mailto:a@b.c', '']) {
      assert.equal(urls.add(url), false, url);
      assert.equal(urls.has(url), false, url);
    }
    assert.equal(urls.has('https://a.example/authorize'), true);
    assert.equal(urls.has('https://a.example/authorize?x'), false);
  });

  it('opens a URL once when the host and the page both announce it, and again after a while', () => {
    let now = 1_000;
    const urls = new SignInUrls(() => now, 10_000);
    assert.equal(urls.claim('https://a.example/authorize'), false, 'never recorded');
    urls.add('https://a.example/authorize');
    assert.equal(urls.claim('https://a.example/authorize'), true);
    now += 2_000;
    assert.equal(urls.claim('https://a.example/authorize'), false);
    // Adding again (the host announcing it) does not reset the clock.
    urls.add('https://a.example/authorize');
    assert.equal(urls.claim('https://a.example/authorize'), false);
    now += 10_000;
    assert.equal(urls.claim('https://a.example/authorize'), true);
  });
});

describe('originOf', () => {
  it('answers the origin of http(s) URLs and nothing for opaque or broken ones', () => {
    assert.equal(originOf('http://127.0.0.1:9101/x?y'), 'http://127.0.0.1:9101');
    assert.equal(originOf('data:text/html,hi'), undefined);
    assert.equal(originOf('file:///x'), undefined);
    assert.equal(originOf('nope'), undefined);
  });
});
