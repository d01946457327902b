import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAuthority, parseOrigin } from './authority.js';

describe('parseAuthority', () => {
  it('takes a host name, an IPv4 or a bracketed IPv6 address, and an optional port', () => {
    assert.deepEqual(parseAuthority('LocalHost:9100'), { hostname: 'localhost', port: 9100 });
    assert.deepEqual(parseAuthority('127.0.0.1'), { hostname: '127.0.0.1' });
    assert.deepEqual(parseAuthority('[::1]:9100'), { hostname: '::1', port: 9100 });
    assert.deepEqual(parseAuthority('build_box.example:65535'), { hostname: 'build_box.example', port: 65535 });
  });

  it('refuses everything else: user info, a second host, spaces, tabs, paths, bad ports', () => {
    for (const value of [
      '127.0.0.1:19100@evil.com',
      'evil.com@127.0.0.1:19100',
      '127.0.0.1:19101 evil.com',
      '127.0.0.1:19101\tevil.com',
      '127.0.0.1\t',
      '127.0.0.1:9100/path',
      '127.0.0.1:9100?x',
      '127.0.0.1:9100#x',
      '127.0.0.1:',
      '127.0.0.1:65536',
      '127.0.0.1:9100:9101',
      '::1',
      '[::1',
      '[evil.com]',
      '[::1%25eth0]',
      'a%2eb',
      "ev'il",
      '',
      'ex\u212Ample.com',
    ]) {
      assert.equal(parseAuthority(value), undefined, JSON.stringify(value));
    }
  });
});

describe('parseOrigin', () => {
  it('gives the one form browsers send: lower case, no default port', () => {
    assert.equal(parseOrigin('HTTP://LocalHost:80'), 'http://localhost');
    assert.equal(parseOrigin('https://box.example:443'), 'https://box.example');
    assert.equal(parseOrigin('http://[::1]:6274'), 'http://[::1]:6274');
    assert.equal(parseOrigin('chrome-extension://abcdef'), 'chrome-extension://abcdef');
    assert.equal(parseOrigin('null'), 'null');
  });

  it('refuses what is not an origin', () => {
    for (const value of [
      'http://127.0.0.1:9101/path',
      'http://a@127.0.0.1',
      'http://127.0.0.1:9101 evil',
      '127.0.0.1:9101',
      'file://',
      'http://',
      'NULL',
    ]) {
      assert.equal(parseOrigin(value), undefined, value);
    }
  });
});
