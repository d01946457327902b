import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';

const REDIRECT = 'http://127.0.0.1:8768/callback';

/** Clients named by a metadata document URL: fetched through the network guard, within limits. */
describe('client ID metadata documents', () => {
  let documents: Server;
  let base: string;
  let hits = 0;

  before(async () => {
    documents = createServer((req, res) => {
      hits += 1;
      if (req.url === '/huge.json') {
        // 50 MB, without saying so up front: the limit must hold while reading.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 50 && res.write(chunk)) sent += 1;
          if (sent < 50) res.once('drain', pump);
          else res.end();
        };
        res.on('error', () => {});
        pump();
        return;
      }
      const id = `${base}${req.url}`;
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ client_id: id, client_name: 'Document client', redirect_uris: [REDIRECT] }));
    }).listen(0, '127.0.0.1');
    await once(documents, 'listening');
    base = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });
  after(() => documents.close());

  async function authorize(fx: HostFixture, clientId: string): Promise<Response> {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    });
    return fetch(`${new URL(fx.url).origin}/authorize?${query}`, { redirect: 'manual' });
  }

  describe('on a server that reaches only public https', () => {
    let fx: HostFixture;
    before(async () => (fx = await startHost()));
    after(() => fx.close());

    it('refuses a document URL pointing at a private address, without fetching it', async () => {
      const before = hits;
      const res = await authorize(fx, `${base}/client.json`);
      assert.equal(res.status, 400);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await res.text(), /metadata document .* cannot be used/);
      assert.equal(hits, before);
      assert.deepEqual(await (await fx.host.agentAuthorization()).pending(), []);
    });

    it('says it supports metadata documents', async () => {
      const as = (await (await fetch(`${new URL(fx.url).origin}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(as.client_id_metadata_document_supported, true);
    });
  });

  describe('with private networks allowed (development)', () => {
    let fx: HostFixture;
    before(async () => (fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' })));
    after(() => fx.close());

    it('refuses a document answering 50 MB', async () => {
      const res = await authorize(fx, `${base}/huge.json`);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /larger than 64 KiB/);
    });

    it("uses a good document for the client's name and redirect URIs, fetched once", async () => {
      const before = hits;
      const res = await authorize(fx, `${base}/good.json`);
      assert.equal(res.status, 303);
      await authorize(fx, `${base}/good.json`);
      assert.equal(hits, before + 1, 'cached');
      const pending = await (await fx.host.agentAuthorization()).pending();
      assert.ok(pending.some((r) => r.clientName === 'Document client' && r.clientId === `${base}/good.json`));
    });

    it('refuses a document whose client_id is not its own URL', async () => {
      documents.removeAllListeners('request');
      documents.on('request', (_req, res) =>
        res.writeHead(200).end(JSON.stringify({ client_id: 'https://other.example/c.json', redirect_uris: [REDIRECT] })),
      );
      const res = await authorize(fx, `${base}/liar.json`);
      assert.equal(res.status, 400);
      assert.match(await res.text(), /not its own URL/);
    });
  });
});
