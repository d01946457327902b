import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import { createServer } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { freePort, startHost, textOf, type HostFixture } from '../../test/support/host-fixture.js';
import { finishSignIn, MemoryOAuthProvider, openAuthorization, pollWait, startSignIn } from '../../test/support/oauth-client.js';
import { raw } from '../../test/support/raw-http.js';
import { testCertificate } from '../../test/support/test-certificate.js';

const certificate = testCertificate(['localhost']);

/**
 * A real TLS-terminating reverse proxy on loopback, configured as such proxies usually are: it
 * talks plain http to the server with the upstream's own Host, and says what the client asked for
 * in X-Forwarded-Host and X-Forwarded-Proto.
 */
async function tlsProxy(key: string, cert: string, port: number, upstream: URL): Promise<Server> {
  const proxy = createServer({ key, cert }, (req, res) => {
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host, 'x-forwarded-host': req.headers.host, 'x-forwarded-proto': 'https' },
      },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  proxy.listen(port, '127.0.0.1');
  await once(proxy, 'listening');
  return proxy;
}

describe(
  'behind a TLS-terminating reverse proxy (WORKSPACE_PUBLIC_URL)',
  { skip: typeof certificate === 'string' ? certificate : false },
  () => {
    let fx: HostFixture;
    let proxy: Server;
    let publicOrigin: string;
    let direct: string;
    let dispatcher: Agent;
    // The client trusts the proxy's certificate, as it would a real one.
    const tlsFetch: FetchLike = (url, init) => undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;

    before(async () => {
      const { key, cert } = certificate as { key: string; cert: string };
      const port = await freePort();
      publicOrigin = `https://localhost:${port}`;
      fx = await startHost({}, { WORKSPACE_PUBLIC_URL: publicOrigin });
      direct = new URL(fx.url).origin;
      proxy = await tlsProxy(key, cert, port, new URL(fx.url));
      dispatcher = new Agent({ connect: { ca: cert } });
    });
    after(async () => {
      await fx.close();
      proxy.closeAllConnections();
      proxy.close();
      await dispatcher.close();
    });

    it('names the public https origin in the 401, the resource metadata and the authorization server metadata', async () => {
      const refused = await tlsFetch(`${publicOrigin}/mcp?workspace_path=Crew/a`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      assert.equal(refused.status, 401);
      assert.match(
        refused.headers.get('www-authenticate') ?? '',
        new RegExp(`resource_metadata="${publicOrigin}/.well-known/oauth-protected-resource/mcp\\?workspace_path=Crew/a"`),
      );
      const resource = (await (await tlsFetch(`${publicOrigin}/.well-known/oauth-protected-resource/mcp`)).json()) as {
        resource: string;
        authorization_servers: string[];
      };
      assert.equal(resource.resource, `${publicOrigin}/mcp`);
      assert.deepEqual(resource.authorization_servers, [publicOrigin]);
      const as = (await (await tlsFetch(`${publicOrigin}/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
      assert.equal(as.issuer, publicOrigin);
      for (const name of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'])
        assert.ok(as[name]!.startsWith(`${publicOrigin}/`), `${name}: ${as[name]}`);
    });

    it('signs the SDK client in through the proxy with a token for the public MCP URL, which the direct address refuses', async () => {
      const provider = new MemoryOAuthProvider('http://127.0.0.1:8767/callback', 'Agent behind the proxy');
      const waitUrl = await openAuthorization(await startSignIn(provider, `${publicOrigin}/mcp`, tlsFetch), tlsFetch);
      assert.ok(waitUrl.startsWith(`${publicOrigin}/oauth/wait/`), waitUrl);
      const signIns = await fx.host.agentAuthorization();
      const pending = (await signIns.pending()).find((r) => r.clientId === provider.client?.client_id)!;
      assert.equal(pending.resource, `${publicOrigin}/mcp`);
      await signIns.decide(pending.code, 'approved', 'local', '');
      const answer = (await pollWait(waitUrl, tlsFetch))!;
      await finishSignIn(provider, `${publicOrigin}/mcp`, answer.searchParams.get('code')!, tlsFetch);
      assert.equal(decodeJwt(provider.saved!.access_token).aud, `${publicOrigin}/mcp`);

      const client = new Client({ name: 'behind-proxy', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${publicOrigin}/mcp`), { authProvider: provider, fetch: tlsFetch }));
      assert.match(textOf(await client.callTool({ name: 'bash', arguments: { command: 'echo "over $((1 + 1)) hops"' } })), /over 2 hops/);
      await client.close();

      // Bound to the public URL: the same token straight to the loopback address is another audience.
      const straight = await raw(fx.url, {
        headers: { Authorization: `Bearer ${provider.saved!.access_token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(straight.status, 401);
      assert.match(straight.body, /issued for another resource/);
    });

    it('keeps the loopback origin for requests that come straight in, also with a forged X-Forwarded-Host', async () => {
      for (const headers of [{}, { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' }] as Array<Record<string, string>>) {
        const res = await raw(fx.url, { headers, body: '{}' });
        assert.equal(res.status, 401);
        assert.match(
          String(res.headers['www-authenticate']),
          new RegExp(`resource_metadata="${direct}/.well-known/oauth-protected-resource/mcp"`),
        );
      }
      const resource = (await (
        await fetch(`${direct}/.well-known/oauth-protected-resource`, { headers: { 'X-Forwarded-Host': 'evil.example' } })
      ).json()) as { resource: string };
      assert.equal(resource.resource, `${direct}/mcp`);
    });
  },
);
