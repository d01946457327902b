import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net, { isIP, type AddressInfo, type LookupFunction } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import tls from 'node:tls';
import { request as undiciRequest } from 'undici';
import { testCertificate } from '../../test/support/test-certificate.js';
import { createGuardedFetch, MAX_REDIRECTS } from './guarded-fetch.js';
import { NetworkPolicyError, type NetworkPolicyErrorKind } from './network-policy-error.js';
import type { ResolvedAddress } from './target-check.js';
import { interfaceAddresses } from './this-machine.js';
import { isForbiddenAddress } from './address-policy.js';

// ---------------------------------------------------------------------------------------------
// Outbound guard. These tests must never send anything off this machine, also when the code under
// test regresses. So for the whole file every socket undici opens (net.connect, tls.connect — read
// from the module objects at each call) passes through here: it is recorded, and let through only
// when it ends on loopback. The stand-in public address REROUTED is sent to the loopback TLS
// server instead (trusting its test certificate), so https redirects can be tested under the
// default policy; UNREACHED is a public address that is refused here, never connected to.
// ---------------------------------------------------------------------------------------------

const REROUTED = '93.184.215.14';
const UNREACHED = '93.184.216.34';
const LOOPBACK = new Set(['127.0.0.1', '::1']);

interface ConnectionAttempt {
  host: string;
  port: number;
  /** The addresses the socket's lookup answered (the pinned ones), or the IP literal connected to. */
  addresses: string[];
}

const attempts: ConnectionAttempt[] = [];
let testCa: string | undefined;

type Connect = (options: net.TcpNetConnectOpts & tls.ConnectionOptions) => net.Socket;
const originalConnect = { net: net.connect as Connect, tls: tls.connect as Connect };

function intercept(original: Connect, secure: boolean): Connect {
  return (options) => {
    const attempt: ConnectionAttempt = { host: String(options.host), port: Number(options.port), addresses: [] };
    attempts.push(attempt);
    if (isIP(attempt.host)) {
      attempt.addresses.push(attempt.host);
      return LOOPBACK.has(attempt.host) ? original(options) : refusedSocket(`${attempt.host} is not loopback`);
    }
    const pinnedLookup = options.lookup;
    if (!pinnedLookup) return refusedSocket(`${attempt.host} would be looked up in DNS, not in the checked addresses`);
    const lookup: LookupFunction = (hostname, lookupOptions, callback) =>
      pinnedLookup(hostname, lookupOptions, (error, address, family) => {
        if (error) return callback(error, address, family);
        const answers: ResolvedAddress[] = typeof address === 'string' ? [{ address, family: family ?? 4 }] : address;
        attempt.addresses.push(...answers.map((a) => a.address));
        const routed = answers.map((a) => (a.address === REROUTED ? { address: '127.0.0.1', family: 4 } : a));
        if (routed.some((a) => !LOOPBACK.has(a.address))) return callback(new Error(`test guard: ${hostname} is not on loopback`), '', 0);
        if (typeof address === 'string') return callback(null, routed[0]!.address, routed[0]!.family);
        return callback(null, routed);
      });
    return original({ ...options, lookup, ...(secure && testCa && { ca: testCa }) });
  };
}

function refusedSocket(why: string): net.Socket {
  const socket = new net.Socket();
  process.nextTick(() => socket.destroy(new Error(`test guard: ${why}`)));
  return socket;
}

/** Watches the connections of a describe's tests, and puts net and tls back after them for the files that share this process. */
function guardConnections(): void {
  before(() => {
    Object.assign(net, { connect: intercept(originalConnect.net, false) });
    Object.assign(tls, { connect: intercept(originalConnect.tls, true) });
  });
  after(() => {
    Object.assign(net, { connect: originalConnect.net });
    Object.assign(tls, { connect: originalConnect.tls });
  });
  beforeEach(() => {
    attempts.length = 0;
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** A resolver with fixed answers (a list per call for names whose answer changes), recording what it was asked. */
function fixedResolver(answers: Record<string, string[] | string[][]>) {
  const asked: string[] = [];
  const calls = new Map<string, number>();
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const entry = answers[hostname];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const call = calls.get(hostname) ?? 0;
    calls.set(hostname, call + 1);
    const list = Array.isArray(entry[0]) ? (entry as string[][])[Math.min(call, entry.length - 1)]! : (entry as string[]);
    return list.map((address) => ({ address, family: isIP(address) }));
  };
  return { resolve, asked };
}

function isPolicyError(kind: NetworkPolicyErrorKind) {
  return (error: unknown) => {
    assert.ok(error instanceof NetworkPolicyError, `expected a NetworkPolicyError, got ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    return true;
  };
}

interface Served {
  origin: string;
  port: number;
  requests: { method: string; url: string; host: string; body: string; contentType: string | undefined }[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, served: Served) => void;

async function serve(server: http.Server, scheme: 'http' | 'https', handler: Handler): Promise<Served> {
  const served: Served = {
    origin: '',
    port: 0,
    requests: [],
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      served.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        host: req.headers.host ?? '',
        body,
        contentType: req.headers['content-type'],
      });
      handler(req, res, served);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  served.port = (server.address() as AddressInfo).port;
  served.origin = `${scheme}://127.0.0.1:${served.port}`;
  return served;
}

function redirect(res: http.ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location }).end('moved');
}

// ---------------------------------------------------------------------------------------------
// Default policy: refused before any connection
// ---------------------------------------------------------------------------------------------

describe('createGuardedFetch, default policy: hostile URLs are refused before any connection', () => {
  guardConnections();

  const answers = {
    'private.example': ['10.0.0.5'],
    'mixed.example': [UNREACHED, '192.168.0.10'],
    'metadata.example': ['169.254.169.254'],
    'ula.example': ['2606:4700:4700::1111', 'fd00::1'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'public.example': [UNREACHED],
    'empty.example': [],
  };

  // [url, kind, host names the resolver must have been asked for]
  const BATTERY: [string, NetworkPolicyErrorKind, string[]][] = [
    ['https://10.0.0.1/', 'private-address', []],
    ['https://172.16.5.4/', 'private-address', []],
    ['https://192.168.0.1:8443/', 'private-address', []],
    ['https://100.64.1.1/', 'private-address', []],
    ['https://169.254.1.1/', 'private-address', []],
    ['https://169.254.169.254/latest/meta-data/', 'private-address', []],
    ['https://100.100.100.200/', 'private-address', []],
    ['https://[fd00:ec2::254]/', 'private-address', []],
    ['https://[fe80::1]/', 'private-address', []],
    ['https://[fc00::1]/', 'private-address', []],
    ['https://[::1]/', 'private-address', []],
    ['https://[::]/', 'private-address', []],
    ['https://0.0.0.0/', 'private-address', []],
    ['https://0/', 'private-address', []],
    ['https://[::ffff:127.0.0.1]/', 'private-address', []],
    ['https://[::ffff:7f00:1]/', 'private-address', []],
    ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'private-address', []],
    ['https://[64:ff9b::7f00:1]/', 'private-address', []],
    ['https://[2002:a9fe:a9fe::]/', 'private-address', []],
    ['https://2130706433/', 'private-address', []],
    ['https://0177.0.0.1/', 'private-address', []],
    ['https://0x7f.1/', 'private-address', []],
    ['https://127.1/', 'private-address', []],
    ['https://0xa9fea9fe/', 'private-address', []],
    ['https://localhost/', 'localhost', []],
    ['https://LOCALHOST./', 'localhost', []],
    ['https://foo.localhost:8443/', 'localhost', []],
    ['https://private.example/', 'private-address', ['private.example']],
    ['https://mixed.example/', 'private-address', ['mixed.example']],
    ['https://metadata.example/', 'private-address', ['metadata.example']],
    ['https://ula.example/', 'private-address', ['ula.example']],
    ['https://mapped.example/', 'private-address', ['mapped.example']],
    ['http://public.example/', 'scheme', []],
    ['http://127.0.0.1/', 'scheme', []],
    ['ftp://public.example/', 'scheme', []],
    ['file:///etc/passwd', 'scheme', []],
    ['https://user:hunter2@public.example/', 'userinfo', []],
    ['https://s3cret-token@public.example/', 'userinfo', []],
    ['https://unknown.example/', 'resolve-failed', ['unknown.example']],
    ['https://empty.example/', 'resolve-failed', ['empty.example']],
  ];

  for (const [url, kind, asked] of BATTERY) {
    it(`refuses ${url} (${kind})`, async () => {
      const resolver = fixedResolver(answers);
      const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
      // A secret in the query string must never reach the message (messages end up in logs).
      const withSecret = `${url}?code=s3cret-value`;
      await assert.rejects(guarded.fetch(withSecret), (error: unknown) => {
        isPolicyError(kind)(error);
        const { message } = error as NetworkPolicyError;
        const parsed = new URL(url);
        assert.ok(
          message.includes(parsed.origin === 'null' ? `${parsed.protocol}//${parsed.host}` : parsed.origin),
          `names the origin: ${message}`,
        );
        assert.ok(!message.includes('s3cret') && !message.includes('hunter2'), `no query, user name or password: ${message}`);
        if (kind === 'private-address' || kind === 'localhost' || kind === 'scheme')
          assert.match(message, /WORKSPACE_ALLOW_PRIVATE_NETWORK=1/);
        return true;
      });
      assert.deepEqual(resolver.asked, asked);
      assert.deepEqual(attempts, [], 'no socket was opened');
      await guarded.close();
    });
  }

  it('normalizes every IPv4 literal form through the WHATWG URL parser before checking it', () => {
    for (const url of [
      'https://2130706433/',
      'https://0177.0.0.1/',
      'https://0x7f.1/',
      'https://127.1/',
      'https://017700000001/',
      'https://%31%32%37.0.0.1/',
      'https://127.0.0.1./',
    ]) {
      assert.equal(new URL(url).hostname, '127.0.0.1', url);
    }
    assert.equal(new URL('https://[::ffff:127.0.0.1]/').hostname, '[::ffff:7f00:1]');
  });

  it('refuses an IPv6 zone id: the URL parser rejects it before anything is resolved or connected', async () => {
    const resolver = fixedResolver(answers);
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    await assert.rejects(guarded.fetch('https://[fe80::1%25eth0]/'), TypeError);
    assert.deepEqual(resolver.asked, []);
    assert.deepEqual(attempts, []);
    await guarded.close();
  });

  it('names the private answer among several', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: fixedResolver(answers).resolve });
    await assert.rejects(
      guarded.fetch('https://mixed.example/'),
      /"mixed\.example" resolves to 93\.184\.216\.34 and 192\.168\.0\.10; 192\.168\.0\.10 is a private address \(192\.168\.0\.0\/16\)/,
    );
    await guarded.close();
  });

  it('lets a name resolving to a public address through to the connect step, pinned to that address', async () => {
    const resolver = fixedResolver(answers);
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    // The outbound guard stops it there: the socket asked its lookup, got the checked address, and was refused.
    await assert.rejects(guarded.fetch('https://public.example/mcp'), (error: unknown) => {
      assert.ok(!(error instanceof NetworkPolicyError));
      assert.match(String((error as Error).cause), /test guard: public\.example is not on loopback/);
      return true;
    });
    assert.deepEqual(resolver.asked, ['public.example']);
    assert.deepEqual(attempts, [{ host: 'public.example', port: 443, addresses: [UNREACHED] }]);
    await guarded.close();
  });
});

// ---------------------------------------------------------------------------------------------
// Default policy over https: redirects (a loopback TLS server behind the stand-in public address)
// ---------------------------------------------------------------------------------------------

const certificate = testCertificate(['hop.example', 'rebind.example', 'other.example']);
const tlsSkip = typeof certificate === 'string' ? certificate : false;

describe('createGuardedFetch, default policy: redirects over https', { skip: tlsSkip }, () => {
  guardConnections();

  let server: Served;
  const resolver = fixedResolver({
    'hop.example': [REROUTED],
    'other.example': [REROUTED],
    // Public for the first request, private when the redirect is checked: DNS rebinding.
    'rebind.example': [[REROUTED], ['10.0.0.7']],
  });

  before(async () => {
    const { key, cert } = certificate as { key: string; cert: string };
    testCa = cert;
    server = await serve(https.createServer({ key, cert }), 'https', (req, res, served) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      if (path === '/start') return redirect(res, 302, '/next');
      if (path === '/away') return redirect(res, 302, `https://other.example:${served.port}/`);
      res.end(`at ${req.headers.host}${req.url}`);
    });
  });
  after(async () => {
    testCa = undefined;
    await server.close();
  });

  it('follows a same-origin redirect, pinned to the checked (public) address', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    const response = await guarded.fetch(`https://hop.example:${server.port}/start`);
    assert.equal(await response.text(), `at hop.example:${server.port}/next`);
    assert.ok(attempts.length > 0);
    for (const attempt of attempts) assert.deepEqual(attempt, { host: 'hop.example', port: server.port, addresses: [REROUTED] });
    await guarded.close();
  });

  it('keeps a same-host redirect on the address checked first, even when the name now resolves to a private one', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    server.requests.length = 0;
    const response = await guarded.fetch(`https://rebind.example:${server.port}/start`);
    await response.text();
    // The origin was checked once and pinned: the second DNS answer (10.0.0.7) is never asked for or used.
    assert.deepEqual(
      attempts.map((a) => a.addresses),
      attempts.map(() => [REROUTED]),
      'every connection went to the first, checked, address',
    );
    await guarded.close();
  });

  it('checks again after close(): a new connection resolves the name anew', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    await (await guarded.fetch(`https://hop.example:${server.port}/start`)).text();
    await guarded.close();
    const fresh = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    await assert.rejects(fresh.fetch(`https://rebind.example:${server.port}/next`), isPolicyError('private-address'));
    await fresh.close();
  });

  it('refuses a redirect to another origin, naming both origins', async () => {
    const guarded = createGuardedFetch({ allowPrivateNetwork: false, appPorts: () => [], resolve: resolver.resolve });
    server.requests.length = 0;
    await assert.rejects(guarded.fetch(`https://hop.example:${server.port}/away?token=s3cret`), (error: unknown) => {
      isPolicyError('redirect')(error);
      const { message } = error as Error;
      assert.ok(
        message.includes(`https://hop.example:${server.port}`) && message.includes(`https://other.example:${server.port}`),
        message,
      );
      assert.ok(!message.includes('s3cret'), message);
      return true;
    });
    assert.deepEqual(
      server.requests.map((r) => r.host),
      [`hop.example:${server.port}`],
    );
    await guarded.close();
  });
});

// ---------------------------------------------------------------------------------------------
// allowPrivateNetwork (local development) on loopback
// ---------------------------------------------------------------------------------------------

describe('createGuardedFetch, allowPrivateNetwork: loopback targets', () => {
  guardConnections();

  let server: Served;
  let elsewhere: Served;

  before(async () => {
    elsewhere = await serve(http.createServer(), 'http', (_req, res) => res.end('elsewhere'));
    server = await serve(http.createServer(), 'http', (req, res, served) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/one') return redirect(res, 302, '/two');
      if (path === '/two') return redirect(res, 307, `${served.origin}/done`);
      if (path === '/see-other') return redirect(res, 303, '/done');
      if (path === '/temporary') return redirect(res, 307, '/done');
      if (path === '/loop') return redirect(res, 302, '/loop');
      if (path === '/away') return redirect(res, 302, `${elsewhere.origin}/`);
      if (path === '/credentials') return redirect(res, 302, `http://user:pw@127.0.0.1:${served.port}/done`);
      res.end(`done ${req.method}`);
    });
  });
  after(async () => {
    await server.close();
    await elsewhere.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    elsewhere.requests.length = 0;
  });

  const local = (resolve?: (host: string) => Promise<ResolvedAddress[]>) =>
    createGuardedFetch({ allowPrivateNetwork: true, appPorts: () => [], ...(resolve && { resolve }) });

  it('fetches from a loopback http server', async () => {
    const guarded = local();
    const response = await guarded.fetch(`${server.origin}/hello`);
    assert.equal(response.status, 200);
    // A global Response, so code that checks `instanceof Response` (the SDK's OAuth errors) reads its body.
    assert.ok(response instanceof Response);
    assert.equal(response.url, `${server.origin}/hello`);
    assert.equal(await response.text(), 'done GET');
    await guarded.close();
  });

  it('follows same-origin redirects to the final response', async () => {
    const guarded = local();
    const response = await guarded.fetch(`${server.origin}/one`);
    assert.equal(await response.text(), 'done GET');
    assert.equal(response.url, `${server.origin}/done`);
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/one', '/two', '/done'],
    );
    await guarded.close();
  });

  it('turns a POST into a GET without body or content type on 303, and keeps it on 307', async () => {
    const guarded = local();
    const post = { method: 'POST', headers: { 'content-type': 'application/json', 'x-kept': '1' }, body: '{"a":1}' };
    assert.equal(await (await guarded.fetch(`${server.origin}/see-other`, post)).text(), 'done GET');
    assert.deepEqual(server.requests[1], {
      method: 'GET',
      url: '/done',
      host: `127.0.0.1:${server.port}`,
      body: '',
      contentType: undefined,
    });
    server.requests.length = 0;
    assert.equal(await (await guarded.fetch(`${server.origin}/temporary`, post)).text(), 'done POST');
    assert.deepEqual(server.requests[1], {
      method: 'POST',
      url: '/done',
      host: `127.0.0.1:${server.port}`,
      body: '{"a":1}',
      contentType: 'application/json',
    });
    await guarded.close();
  });

  it('refuses to follow a 307 for a streamed body, which cannot be sent again', async () => {
    const guarded = local();
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'));
        controller.close();
      },
    });
    await assert.rejects(
      guarded.fetch(`${server.origin}/temporary`, { method: 'POST', body, duplex: 'half' } as RequestInit),
      isPolicyError('redirect'),
    );
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/temporary'],
    );
    await guarded.close();
  });

  it(`stops after ${MAX_REDIRECTS} redirects`, async () => {
    const guarded = local();
    await assert.rejects(guarded.fetch(`${server.origin}/loop`), (error: unknown) => {
      isPolicyError('redirect')(error);
      assert.match((error as Error).message, /redirected more than 5 times/);
      return true;
    });
    assert.equal(server.requests.length, MAX_REDIRECTS + 1);
    await guarded.close();
  });

  it('refuses a redirect to another origin (another port), naming both origins', async () => {
    const guarded = local();
    await assert.rejects(guarded.fetch(`${server.origin}/away`), (error: unknown) => {
      isPolicyError('redirect')(error);
      assert.ok((error as Error).message.includes(`from ${server.origin} to ${elsewhere.origin}`), (error as Error).message);
      return true;
    });
    assert.equal(elsewhere.requests.length, 0);
    await guarded.close();
  });

  it('refuses a same-origin redirect that adds a user name and password', async () => {
    const guarded = local();
    await assert.rejects(guarded.fetch(`${server.origin}/credentials`), isPolicyError('userinfo'));
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/credentials'],
    );
    await guarded.close();
  });

  it('returns the redirect as it is with redirect: "manual" (the MCP SDK follows and reports redirects itself)', async () => {
    const guarded = local();
    const response = await guarded.fetch(`${server.origin}/away`, { redirect: 'manual' });
    assert.equal(response.status, 302);
    assert.equal(response.headers.get('location'), `${elsewhere.origin}/`);
    assert.equal(elsewhere.requests.length, 0);
    await guarded.close();
  });

  it('fails on any redirect with redirect: "error"', async () => {
    const guarded = local();
    await assert.rejects(guarded.fetch(`${server.origin}/one`, { redirect: 'error' }), TypeError);
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/one'],
    );
    await guarded.close();
  });

  it('still refuses user names, passwords and schemes other than http(s)', async () => {
    const guarded = local();
    await assert.rejects(guarded.fetch(`http://user:pw@127.0.0.1:${server.port}/`), isPolicyError('userinfo'));
    await assert.rejects(guarded.fetch(`ftp://127.0.0.1:${server.port}/`), (error: unknown) => {
      isPolicyError('scheme')(error);
      assert.doesNotMatch((error as Error).message, /WORKSPACE_ALLOW_PRIVATE_NETWORK/, 'no hint to set what is already set');
      return true;
    });
    assert.equal(server.requests.length, 0);
    await guarded.close();
  });

  it('pins the connection to the resolved address, sending the name in the Host header', async () => {
    const resolver = fixedResolver({ 'pinned.test': ['127.0.0.1'] });
    const guarded = local(resolver.resolve);
    // pinned.test does not exist in DNS: the request arrives only because the socket used the pinned address.
    const response = await guarded.fetch(`http://pinned.test:${server.port}/pinned`);
    assert.equal(await response.text(), 'done GET');
    assert.equal(server.requests[0]?.host, `pinned.test:${server.port}`);
    assert.deepEqual(resolver.asked, ['pinned.test']);
    assert.deepEqual(attempts, [{ host: 'pinned.test', port: server.port, addresses: ['127.0.0.1'] }]);
    await guarded.close();
  });

  it('keeps its agent from connecting to a name the guarded fetch never checked', async () => {
    const guarded = local(fixedResolver({}).resolve);
    await assert.rejects(
      undiciRequest(`http://unchecked.test:${server.port}/`, { dispatcher: await guarded.dispatcher() }),
      (error: unknown) => {
        assert.equal((error as NodeJS.ErrnoException).code, 'ENOTFOUND');
        return true;
      },
    );
    assert.equal(server.requests.length, 0);
    await guarded.close();
  });

  it('resolves with the system resolver when none is given', async () => {
    const guarded = local();
    const response = await guarded.fetch(`http://localhost:${server.port}/system`);
    assert.equal(await response.text(), 'done GET');
    assert.equal(server.requests[0]?.host, `localhost:${server.port}`);
    await guarded.close();
  });

  it('refuses requests once closed', async () => {
    const guarded = local();
    await guarded.close();
    await assert.rejects(guarded.fetch(`${server.origin}/after-close`));
    assert.equal(server.requests.length, 0);
  });

  it('still refuses link-local, metadata and unspecified addresses, and names resolving there, before any socket opens', async () => {
    const resolver = fixedResolver({
      'metadata.test': ['169.254.169.254'],
      'mapped.test': ['::ffff:169.254.169.254'],
      'zero.test': ['0.0.0.0'],
      'mixed.test': ['127.0.0.1', 'fe80::1'],
    });
    const guarded = local(resolver.resolve);
    const targets = [
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.1.1/',
      'http://100.100.100.200/',
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://0xa9fea9fe/',
      `http://0.0.0.0:${server.port}/`,
      `http://[::]:${server.port}/`,
      'http://metadata.test/',
      'http://mapped.test/',
      `http://zero.test:${server.port}/`,
      `http://mixed.test:${server.port}/`,
    ];
    for (const target of targets) await assert.rejects(guarded.fetch(target), isPolicyError('private-address'), target);
    assert.deepEqual(attempts, []);
    assert.equal(server.requests.length, 0);
    await guarded.close();
  });

  it("refuses the app's own ports on any spelling of this machine, by address or by name", async () => {
    const own = server.port;
    const resolver = fixedResolver({ 'own.test': ['127.0.0.1'], 'own6.test': ['::1'] });
    const guarded = createGuardedFetch({ allowPrivateNetwork: true, appPorts: () => [own], resolve: resolver.resolve });
    const targets = [
      `http://127.0.0.1:${own}/api/tokens`,
      `http://127.1.2.3:${own}/`,
      `http://2130706433:${own}/`,
      `http://0x7f.1:${own}/`,
      `http://[::1]:${own}/mcp`,
      `http://[::ffff:127.0.0.1]:${own}/`,
      `http://own.test:${own}/`,
      `http://own6.test:${own}/`,
      // This machine's other addresses (those the setting lets in at all; the others are refused anyway).
      ...interfaceAddresses()
        .filter((a) => !a.includes('%') && isForbiddenAddress(a, true) === undefined)
        .map((a) => `http://${a.includes(':') ? `[${a}]` : a}:${own}/`),
    ];
    for (const target of targets) await assert.rejects(guarded.fetch(target), isPolicyError('app-port'), target);
    const system = createGuardedFetch({ allowPrivateNetwork: true, appPorts: () => [own] });
    await assert.rejects(system.fetch(`http://localhost:${own}/`), isPolicyError('app-port'));
    assert.deepEqual(attempts, []);
    assert.equal(server.requests.length, 0);
    // Another loopback port is the switch's point: a local MCP server.
    assert.equal(await (await guarded.fetch(`${elsewhere.origin}/`)).text(), 'elsewhere');
    await Promise.all([guarded.close(), system.close()]);
  });
});
