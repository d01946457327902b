import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allowListEntry, canonicalHost, checkAllowList, matchHost } from './network-allow-list.js';

describe('the network allow-list', () => {
  it('writes each host one way: case, trailing dot, punycode, IPv4 spellings, IPv6 brackets', () => {
    for (const [input, canonical] of [
      ['Example.COM', 'example.com'],
      ['example.com.', 'example.com'],
      [' example.com ', 'example.com'],
      ['bücher.de', 'xn--bcher-kva.de'],
      ['XN--BCHER-KVA.de', 'xn--bcher-kva.de'],
      ['127.1', '127.0.0.1'],
      ['0x7f.0.0.1', '127.0.0.1'],
      ['2130706433', '127.0.0.1'],
      ['1.2.3.4.', '1.2.3.4'],
      ['[::1]', '::1'],
      ['0:0:0:0:0:0:0:1', '::1'],
      ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
      ['my_host.internal', 'my_host.internal'],
    ] as const) {
      assert.equal(canonicalHost(input), canonical, input);
    }
    for (const input of [
      '',
      'a..b',
      '-a.com',
      'a-.com',
      'host:80',
      'a/b',
      'u@h',
      'h?x',
      'e%61.com',
      'fe80::1%eth0',
      '*.a.com',
      `${'a'.repeat(64)}.com`,
      `${'a.'.repeat(127)}com`,
    ]) {
      assert.equal(canonicalHost(input), undefined, input);
    }
  });

  it('takes names, wildcards, * and IP literals; refuses schemes, ports and paths with what to write', () => {
    assert.deepEqual(checkAllowList(['*.Example.com', 'example.com', '*', '10.0.0.1', '[2001:db8::1]', 'example.com.']), [
      '*.example.com',
      'example.com',
      '*',
      '10.0.0.1',
      '2001:db8::1',
    ]);
    for (const bad of ['https://a.com', 'a.com:443', 'a.com/x', '*.', '**.a.com', 'a.*.com', '*.1.2.3.4', '*a.com']) {
      assert.throws(() => allowListEntry(bad), /is not a host name: write a name \(api\.github\.com\), a wildcard/, bad);
    }
    assert.throws(() => checkAllowList(new Array(201).fill('a.com')), /At most 200 hosts/);
  });

  it('matches exact names, the names under a wildcard (not the domain itself), and * for any', () => {
    const list = ['api.github.com', '*.npmjs.org', '10.0.0.1'];
    assert.equal(matchHost('api.github.com', list), 'exact');
    assert.equal(matchHost('github.com', list), undefined);
    assert.equal(matchHost('registry.npmjs.org', list), 'wildcard');
    assert.equal(matchHost('a.b.npmjs.org', list), 'wildcard');
    assert.equal(matchHost('npmjs.org', list), undefined, 'a wildcard names what is under the domain');
    assert.equal(matchHost('evilnpmjs.org', list), undefined, 'a wildcard matches whole labels');
    assert.equal(matchHost('10.0.0.1', list), 'exact');
    assert.equal(matchHost('10.0.0.2', list), undefined);
    assert.equal(matchHost('anything.example', [...list, '*']), 'any');
    assert.equal(matchHost('api.github.com', [...list, '*']), 'exact', 'an exact entry wins over *');
  });
});
