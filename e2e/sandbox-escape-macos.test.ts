import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { itRunsTheBattery, sharedAttempts, startEscapeHost, type Attempt, type EscapeHost } from './sandbox-escape-battery.js';

/*
 * The escape battery of issue 16 on macOS, with real Seatbelt (sandbox-exec): the attempts of
 * e2e/sandbox-escape.test.ts that mean something on a Mac (no /proc, no D-Bus, no nsenter), plus
 * the Mac's own ways out: the keychain's files and daemon, another process's environment through
 * sysctl, moving the state dir out from under its rule. Under `place` and `strict` each fails;
 * under `machine` each works, which proves it reaches its target when nothing stops it.
 * Elsewhere the whole suite is skipped, saying why.
 */
const skip = process.platform === 'darwin' ? false : `Seatbelt needs macOS; this machine is ${process.platform}`;
if (skip) process.stderr.write(`e2e/sandbox-escape-macos.test.ts skipped: ${skip}\n`);

describe('the sandbox escape battery on macOS (Seatbelt), as an agent of Crew/alpha', { skip }, () => {
  let host: EscapeHost;
  let attempts: Attempt[];
  let service: Server;
  let servicePort: number;

  before(async () => {
    if (skip) return;
    host = await startEscapeHost('pw-escape-mac-');
    service = createServer((_req, res) => res.end('service'));
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    servicePort = (service.address() as AddressInfo).port;

    const { state } = host.targets;
    attempts = [
      ...sharedAttempts(host.targets),
      // Moved back at once under machine, where it works.
      {
        name: 'move the state dir out from under its rule',
        bash: `mv ${state} ${state}-moved && cat ${state}-moved/secrets.key; s=$?; mv ${state}-moved ${state} 2>/dev/null; exit $s`,
      },
      { name: "the keychain's files", bash: `ls ${join(homedir(), 'Library', 'Keychains')} | grep -q .` },
      { name: "the keychain's daemon", bash: 'security list-keychains -d user | grep -q keychain' },
      { name: "the host's environment (sysctl kern.procargs2)", bash: `ps -wwE -p ${process.pid} | grep -q PATH=` },
    ];
  });

  after(async () => {
    if (skip) return;
    service?.close();
    await host?.close();
  });

  const bash = async (command: string) =>
    (await host.client.callTool({ name: 'bash', arguments: { command, timeout: 20 } })) as unknown as {
      structuredContent: { exitCode: number; stdout: string; stderr: string };
    };

  itRunsTheBattery(() => ({ host, attempts }));

  it('works inside the place under place and strict: files, commands, temp files, a terminal', async () => {
    const {
      client,
      targets: { alpha, ws },
    } = host;
    for (const kind of ['place', 'strict'] as const) {
      await host.setPolicy(kind);
      const wrote = await client.callTool({ name: 'write', arguments: { path: join(alpha, `${kind}.txt`), content: `${kind}\n` } });
      assert.ok(!wrote.isError, JSON.stringify(wrote));
      const run = await bash(
        `pwd; cat ${kind}.txt; echo t > "$TMPDIR/pw-mac-$$" && rm "$TMPDIR/pw-mac-$$" && echo tmp-ok; id -un >/dev/null && echo id-ok`,
      );
      assert.equal(run.structuredContent.exitCode, 0, JSON.stringify(run));
      assert.equal(run.structuredContent.stdout, `${alpha}\n${kind}\ntmp-ok\nid-ok\n`);
      const tty = (await client.callTool({
        name: 'bash',
        arguments: { command: `test -t 1 && cat ${alpha}/${kind}.txt; cat ${ws}/Crew/beta/notes.txt`, tty: true },
      })) as unknown as { structuredContent: { exitCode: number; stdout: string } };
      assert.notEqual(tty.structuredContent.exitCode, 0);
      assert.match(tty.structuredContent.stdout, new RegExp(`^${kind}\\r?\\n.*Operation not permitted`, 's'));
    }
    // Strict's temp folder is its own: /tmp is the machine's, out of reach.
    const tmp = await bash('echo t > /tmp/pw-mac-strict-$$');
    assert.notEqual(tmp.structuredContent.exitCode, 0);
  });

  it("reaches the network only through the proxy, by the place's list", async () => {
    await host.setPolicy('strict');
    const off = await bash(`curl -s -m 5 http://127.0.0.1:${servicePort}/`);
    assert.notEqual(off.structuredContent.exitCode, 0, 'strict without a list: no network');
    await host.setPolicy('strict', ['localhost']);
    const listed = await bash(`curl -s -m 5 http://localhost:${servicePort}/`);
    assert.equal(listed.structuredContent.stdout, 'service', JSON.stringify(listed));
    const direct = await bash(`curl -s -m 5 --noproxy '*' http://127.0.0.1:${servicePort}/`);
    assert.notEqual(direct.structuredContent.exitCode, 0, 'nothing past the proxy');
  });
});
