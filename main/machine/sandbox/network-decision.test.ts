import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResolvedAddress } from '../../network/target-check.js';
import { decideConnection, type NetworkMachine, type NetworkRules } from './network-decision.js';

/** A resolver of fixed answers: the decision is a function of the names' addresses, not of this machine's DNS. */
const DNS: Record<string, string[]> = {
  'api.example.com': ['93.184.215.14'],
  'cdn.example.com': ['2606:4700::6810:84e5'],
  'registry.npmjs.org': ['104.16.1.35'],
  'db.internal': ['10.1.2.3'],
  localhost: ['127.0.0.1', '::1'],
  'rebind.example.com': ['93.184.215.15', '192.168.1.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'self.example.com': ['203.0.113.50'],
  'xn--bcher-kva.de': ['81.169.145.1'],
};
const machine: NetworkMachine = {
  resolve: async (name) => {
    const answers = DNS[name];
    if (!answers) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return answers.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  },
  appPorts: () => [9100, 9101],
  localAddresses: () => ['81.169.145.77', 'fe80::1%eth0'],
};
const strict = (allow: string[]): NetworkRules => ({ kind: 'strict', placeLabel: 'Crew alpha', placeRoot: 'Crew/alpha', allow });
const place = (allow: string[] = []): NetworkRules => ({ kind: 'place', placeLabel: 'Crew alpha', placeRoot: 'Crew/alpha', allow });

async function verdict(host: string, port: string | number, rules: NetworkRules): Promise<string> {
  const decision = await decideConnection(host, port, rules, machine);
  return decision.allowed ? `allowed ${decision.addresses.map((a) => a.address).join(' ')}` : `${decision.status} ${decision.message}`;
}

describe('the sandbox network proxy decides each connection', () => {
  it('strict: only listed names, exactly or under a wildcard, in any case, with or without a trailing dot', async () => {
    const rules = strict(['api.example.com', '*.npmjs.org', 'xn--bcher-kva.de']);
    assert.equal(await verdict('api.example.com', 443, rules), 'allowed 93.184.215.14');
    assert.equal(await verdict('API.Example.COM.', '443', rules), 'allowed 93.184.215.14');
    assert.equal(await verdict('registry.npmjs.org', 443, rules), 'allowed 104.16.1.35');
    assert.equal(await verdict('bücher.de', 80, rules), 'allowed 81.169.145.1', 'an international name matches its punycode');
    for (const host of ['cdn.example.com', 'npmjs.org', 'evilnpmjs.org', 'example.com']) {
      const answer = await verdict(host, 443, rules);
      assert.match(
        answer,
        /^403 Refused by the strict policy of Crew alpha: cannot connect to .*, because .* is not on the place's network allow-list, which lists only api\.example\.com, \*\.npmjs\.org, xn--bcher-kva\.de\. The person who runs this app can change the list with "persona-mcp-workspace places network Crew\/alpha off\|HOST\.\.\."/,
        host,
      );
    }
  });

  it('strict with no list refuses everything, and says so', async () => {
    assert.match(
      await verdict('api.example.com', 443, strict([])),
      /^403 .* because api\.example\.com is not on the place's network allow-list\. The person who runs/,
    );
  });

  it("private, loopback, link-local and this machine's addresses only through a name listed exactly", async () => {
    assert.equal(await verdict('db.internal', 5432, strict(['db.internal'])), 'allowed 10.1.2.3');
    assert.equal(await verdict('localhost', 8080, strict(['localhost'])), 'allowed 127.0.0.1 ::1');
    assert.match(
      await verdict('db.internal', 5432, strict(['*.internal'])),
      /^403 .*db\.internal resolves to 10\.1\.2\.3, which is a private address \(10\.0\.0\.0\/8\); a loopback, private or local address is reached only through a name listed exactly/,
    );
    assert.match(await verdict('db.internal', 5432, strict(['*'])), /^403 .*a private address/);
    assert.match(
      await verdict('metadata.example.com', 80, place()),
      /^403 Refused by the place policy of Crew alpha: .*the cloud metadata service address/,
    );
    assert.match(await verdict('mapped.example.com', 80, place()), /^403 .*IPv4-mapped IPv6 address of 127\.0\.0\.1/);
    assert.match(
      await verdict('rebind.example.com', 443, strict(['*.example.com'])),
      /^403 .*resolves to 192\.168\.1\.1, which is a private address/,
      'one private answer among public ones is refused',
    );
    assert.match(await verdict('81.169.145.77', 22, place()), /^403 .*81\.169\.145\.77 is an address of this machine/);
    assert.equal(await verdict('81.169.145.77', 22, place(['81.169.145.77'])), 'allowed 81.169.145.77');
  });

  it('place: any public host, by name or IP literal (IPv4 spellings and IPv6 brackets too)', async () => {
    assert.equal(await verdict('cdn.example.com', 443, place()), 'allowed 2606:4700::6810:84e5');
    assert.equal(await verdict('93.184.215.14', 80, place()), 'allowed 93.184.215.14');
    assert.equal(await verdict('[2606:4700::6810:84e5]', 443, place()), 'allowed 2606:4700::6810:84e5');
    assert.equal(await verdict('1572394766', 80, place()), 'allowed 93.184.215.14', 'a decimal IPv4 is its dotted quad');
    for (const [host, reason] of [
      ['127.0.0.1', 'a loopback address'],
      ['127.1', 'a loopback address'],
      ['0x7f.0.0.1', 'a loopback address'],
      ['[::1]', 'the loopback address'],
      ['0.0.0.0', 'an unspecified'],
      ['169.254.1.1', 'a link-local address'],
      ['[fe80::1]', 'a link-local address'],
      ['172.16.0.1', 'a private address'],
      ['[fd00::1]', 'a unique-local'],
      ['localhost', 'a loopback address'],
    ] as const) {
      const answer = await verdict(host, 80, place());
      assert.match(answer, /^403 Refused by the place policy of Crew alpha/, host);
      assert.ok(answer.includes(reason), `${host}: ${answer}`);
    }
  });

  it("the app's own ports on this machine never, even through a name listed exactly; elsewhere they are ports like any", async () => {
    for (const [host, allow] of [
      ['localhost', ['localhost']],
      ['127.0.0.1', ['127.0.0.1']],
      ['[::ffff:127.0.0.1]', ['::ffff:7f00:1']],
      ['0.0.0.0', ['0.0.0.0']],
      ['81.169.145.77', ['81.169.145.77']],
    ] as const) {
      const answer = await verdict(host, 9101, strict([...allow]));
      assert.match(
        answer,
        /^403 Refused by the strict policy of Crew alpha: .* because 9101 is a port of this app \(its agent endpoint or control plane\) on this machine/,
        host,
      );
    }
    assert.equal(await verdict('localhost', 9102, strict(['localhost'])), 'allowed 127.0.0.1 ::1');
    assert.equal(
      await verdict('api.example.com', 9100, strict(['api.example.com'])),
      'allowed 93.184.215.14',
      "another machine's port 9100 is not the app",
    );
  });

  it('refuses what is not a host and port, and says when a name does not resolve', async () => {
    for (const [host, port, message] of [
      ['exa mple.com', 443, /^400 Refused exa mple\.com:443: "exa mple\.com" is not a host name/],
      ['a.com/x', 443, /is not a host name/],
      ['user@a.com', 443, /is not a host name/],
      ['fe80::1%eth0', 443, /is not a host name/],
      ['api.example.com', 0, /^400 .*"0" is not a port/],
      ['api.example.com', 65536, /"65536" is not a port/],
      ['api.example.com', '44x', /"44x" is not a port/],
      ['api.example.com', '', /"" is not a port/],
      [
        'nowhere.example.com',
        443,
        /^502 Cannot connect to nowhere\.example\.com:443: "nowhere\.example\.com" does not resolve \(ENOTFOUND\)/,
      ],
    ] as const) {
      assert.match(await verdict(host, port, place()), message, `${host}:${port}`);
    }
  });
});
