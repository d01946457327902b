import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { requestOrigin } from './request-origin.js';

const at = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('requestOrigin', () => {
  it('is http:// and the Host header without a public URL, whatever a proxy header says', () => {
    const originOf = requestOrigin(undefined);
    assert.equal(originOf(at({ host: '127.0.0.1:9100' })), 'http://127.0.0.1:9100');
    assert.equal(
      originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com', 'x-forwarded-proto': 'https' })),
      'http://127.0.0.1:9100',
    );
    assert.equal(originOf.vary, 'Host');
  });

  it('rebuilds the origin from the parsed host and port, never copying the header, and never from one that is no host', () => {
    const originOf = requestOrigin(undefined);
    assert.equal(originOf(at({ host: 'LOCALHOST:09100' })), 'http://localhost:9100');
    assert.equal(originOf(at({ host: '127.0.0.1:80' })), 'http://127.0.0.1');
    assert.throws(() => originOf(at({ host: '127.0.0.1:19100@evil.com' })), /before the Host header was checked/);
  });

  it('is the public origin for a request for the public host: in Host, X-Forwarded-Host or Forwarded', () => {
    const originOf = requestOrigin('https://box.example.com');
    assert.equal(originOf(at({ host: 'box.example.com' })), 'https://box.example.com');
    assert.equal(originOf(at({ host: 'BOX.example.com:443' })), 'https://box.example.com');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com' })), 'https://box.example.com');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com, inner.proxy' })), 'https://box.example.com');
    assert.equal(
      originOf(at({ host: '127.0.0.1:9100', forwarded: 'for=192.0.2.60;proto=https;host="box.example.com"' })),
      'https://box.example.com',
    );
  });

  it("keeps the request's own origin for any other host: a forged header cannot name an origin of its choosing", () => {
    const originOf = requestOrigin('https://box.example.com:8443');
    assert.equal(originOf(at({ host: '127.0.0.1:9100' })), 'http://127.0.0.1:9100');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'evil.example' })), 'http://127.0.0.1:9100');
    // Another port of the public host is another origin.
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com' })), 'http://127.0.0.1:9100');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com:8443' })), 'https://box.example.com:8443');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com:8443/x' })), 'http://127.0.0.1:9100');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'me@box.example.com:8443' })), 'http://127.0.0.1:9100');
    assert.equal(
      originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com:8443@evil.example' })),
      'http://127.0.0.1:9100',
    );
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.exa\tmple.com:8443' })), 'http://127.0.0.1:9100');
    assert.equal(originOf(at({ host: '127.0.0.1:9100', 'x-forwarded-host': 'box.example.com:8443#x' })), 'http://127.0.0.1:9100');
    assert.equal(originOf.vary, 'Host, X-Forwarded-Host, Forwarded');
  });
});
