import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { allowedHostNames, normalizeHost } from './guards.js';

describe('allowed host names', () => {
  it('follow a loopback bind address', () => {
    assert.deepEqual([...allowedHostNames('127.0.0.1', [])].sort(), ['127.0.0.1', '::1', 'localhost']);
  });

  it('follow a specific bind address, plus configured names', () => {
    assert.deepEqual([...allowedHostNames('192.0.2.10', ['Build.Example'])].sort(), ['192.0.2.10', 'build.example']);
  });

  it('include every address and the name of this machine when bound to all interfaces', () => {
    const names = allowedHostNames('0.0.0.0', []);
    assert.ok(names.has('localhost') && names.has('127.0.0.1'));
    assert.ok(names.has(hostname().toLowerCase()));
    assert.ok(!names.has('attacker.example'));
  });

  it('compare Host headers without port or brackets', () => {
    assert.equal(normalizeHost('LocalHost:9100'), 'localhost');
    assert.equal(normalizeHost('[::1]:9100'), '::1');
    assert.equal(normalizeHost('::1'), '::1');
    assert.equal(normalizeHost('example.com'), 'example.com');
  });
});
