import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CommandRunner } from '../command-runner.js';
import { PlaceSandbox } from './place-sandbox.js';
import { SandboxPool } from './sandbox-pool.js';

/*
 * The network of sandboxed commands (real bubblewrap, the app's proxy, the bridge inside): strict
 * reaches only the hosts on its allow-list, place any public host; loopback and private addresses
 * only through a name listed exactly, the app's ports never, and nothing past the proxy.
 */
describe("the sandbox network, through the app's proxy", () => {
  let top: string;
  let ws: string;
  let pool: SandboxPool;
  let service: Server;
  let app: Server;
  let servicePort: number;
  let appPort: number;
  const runner = new CommandRunner({ maxTimeoutSeconds: 30 });

  const listen = async (answer: string): Promise<[Server, number]> => {
    const server = createServer((req, res) => res.end(`${answer} ${req.method} ${req.url} host=${req.headers.host}`));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return [server, (server.address() as AddressInfo).port];
  };

  before(async () => {
    top = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-net-')));
    ws = join(top, 'ws');
    await mkdir(join(ws, 'Crew', 'alpha'), { recursive: true });
    pool = new SandboxPool(300);
    [service, servicePort] = await listen('service');
    [app, appPort] = await listen('app');
  });
  after(async () => {
    await pool.closeAll();
    service.close();
    app.close();
    await rm(top, { recursive: true, force: true });
  });

  const sandboxOf = (kind: 'place' | 'strict', network: string[], live = true) =>
    PlaceSandbox.open({ kind, folders: [], ...(network.length && { network }) }, 'Crew alpha', 'Crew/alpha', {
      workspaceRoot: ws,
      stateDir: join(top, 'state'),
      skillsDir: join(ws, '.agents', 'skills'),
      env: { PATH: process.env.PATH, HOME: '/nonexistent-home' },
      ...(live && { sandboxes: pool }),
      appPorts: () => [appPort],
    });
  const run = async (kind: 'place' | 'strict', network: string[], command: string, live = true) => {
    const result = await runner.run({ command, timeout: 20 }, { sandbox: sandboxOf(kind, network, live) });
    return { code: result.exitCode, out: result.stdout.text, err: result.stderr?.text ?? '' };
  };

  for (const live of [true, false]) {
    const how = live ? "entered into the place's live sandbox" : 'in a sandbox of its own';
    it(`strict with an allow-list, ${how}: a listed name works over plain HTTP and CONNECT; others are refused with why and who can change it`, async () => {
      const allowed = await run(
        'strict',
        ['localhost'],
        `curl -sS http://localhost:${servicePort}/a?b && echo && curl -sS --proxytunnel http://localhost:${servicePort}/tunnel`,
        live,
      );
      assert.equal(allowed.code, 0, allowed.err);
      assert.equal(allowed.out, `service GET /a?b host=localhost:${servicePort}\nservice GET /tunnel host=localhost:${servicePort}`);

      const other = await run('strict', ['localhost'], 'curl -sS -w "%{http_code}" http://not-listed.example/', live);
      assert.match(
        other.out,
        /^Refused by the strict policy of Crew alpha: cannot connect to not-listed\.example:80, because not-listed\.example is not on the place's network allow-list, which lists only localhost\. The person who runs this app can change the list with "persona-mcp-workspace places network Crew\/alpha off\|HOST\.\.\."/,
      );
      assert.match(other.out, /403$/);

      // Listed by name, the loopback address itself is not: a private address only through a name listed exactly.
      const literal = await run('strict', ['localhost'], `curl -sS http://127.0.0.1:${servicePort}/`, live);
      assert.match(literal.out, /because 127\.0\.0\.1 is not on the place's network allow-list/);

      const https = await run('strict', ['localhost'], 'curl -sS -o /dev/null -w "%{http_connect}" https://not-listed.example/', live);
      assert.equal(https.out, '403', 'CONNECT refused too');
      assert.notEqual(https.code, 0);
    });
  }

  it('opens its own connection for each request: none is kept for, or shared with, another sandbox', async () => {
    const peers = new Set<number>();
    const count = (socket: Socket) => peers.add(socket.remotePort ?? 0);
    service.on('connection', count);
    try {
      const command = `curl -sS http://localhost:${servicePort}/one`;
      const live = await run('strict', ['localhost'], command);
      const own = await run('strict', ['localhost'], command, false);
      assert.equal(live.out, own.out, own.err);
      assert.equal(peers.size, 2, 'a keep-alive connection of one sandbox must not carry the next one');
    } finally {
      service.off('connection', count);
    }
  });

  it("never the app's own port, even through a name listed exactly", async () => {
    const result = await run('strict', ['localhost'], `curl -sS -w " %{http_code}" http://localhost:${appPort}/api`);
    assert.match(
      result.out,
      new RegExp(
        `^Refused by the strict policy of Crew alpha: cannot connect to localhost:${appPort}, because ${appPort} is a port of this app \\(its agent endpoint or control plane\\) on this machine \\(127\\.0\\.0\\.1\\), which sandboxed commands never reach\\.\\n 403$`,
      ),
    );
    const tunnel = await run(
      'strict',
      ['localhost'],
      `curl -sS -o /dev/null -w "%{http_connect}" --proxytunnel http://localhost:${appPort}/api`,
    );
    assert.equal(tunnel.out, '403');
  });

  it('nothing past the proxy: a direct connection fails, the namespace has only its loopback', async () => {
    const result = await run(
      'strict',
      ['localhost'],
      `curl -sS --noproxy '*' http://localhost:${servicePort}/ ; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`,
    );
    assert.equal(result.out, 'lo\n');
    assert.match(result.err, /Failed to connect to localhost port/);
  });

  it('strict with no list has no network at all: no proxy, no bridge', async () => {
    const result = await run(
      'strict',
      [],
      `echo "proxy=\${HTTPS_PROXY:-none}"; curl -sS http://localhost:${servicePort}/; exec 3<>/dev/tcp/127.0.0.1/3128 && echo bridge`,
    );
    assert.equal(result.out, 'proxy=none\n');
    assert.match(result.err, /Failed to connect/);
  });

  it('place reaches the network through the proxy, but a loopback or private address only when listed exactly', async () => {
    const env = await run('place', [], 'echo "$HTTP_PROXY $HTTPS_PROXY $https_proxy $ALL_PROXY [$NO_PROXY]"');
    assert.equal(env.out, 'http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 []\n');
    for (const target of [`http://127.0.0.1:${servicePort}/`, `http://localhost:${servicePort}/`, 'http://10.0.0.1/', 'http://[::1]/']) {
      const refused = await run('place', [], `curl -sS -w " %{http_code}" ${target}`);
      assert.match(
        refused.out,
        /^Refused by the place policy of Crew alpha: cannot connect to .*(loopback|private).*a loopback, private or local address is reached only through a name listed exactly on the place's network allow-list\. The person who runs this app can change the list/,
        target,
      );
      assert.match(refused.out, / 403$/);
    }
    const listed = await run('place', ['localhost'], `curl -sS http://localhost:${servicePort}/listed`);
    assert.equal(listed.out, `service GET /listed host=localhost:${servicePort}`, listed.err);
  });

  it('ends the proxy with its sandbox, and removes its socket', async () => {
    await run('strict', ['localhost'], 'true');
    await pool.closeAll();
    pool = new SandboxPool(300);
    assert.deepEqual(await readdir(join(top, 'state', 'sandbox-network')), []);
  });
});
