import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { claimStateDir, findRunningServer, RUNNING_SERVER_FILE, ServerRunningError } from './running-server.js';
import { freePort } from '../test/support/host-fixture.js';

describe('the running server record (control.json)', () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'pw-running-'));
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  const record = (fields: Record<string, unknown>) =>
    writeFile(join(stateDir, RUNNING_SERVER_FILE), JSON.stringify({ version: 1, startedAt: new Date().toISOString(), ...fields }));
  const pidOf = async () => JSON.parse(await readFile(join(stateDir, RUNNING_SERVER_FILE), 'utf8')).pid as number;

  it('takes over the record of a server whose process is gone', async () => {
    await record({ pid: 2 ** 22 + 12345, controlUrl: 'http://127.0.0.1:1', adminToken: 'x' });
    await claimStateDir(stateDir);
    assert.equal(await pidOf(), process.pid);
  });

  it('takes over the record of a live process that does not answer as the server (its pid was reused)', async () => {
    // pid 1 is alive, and nothing listens on the port recorded.
    await record({ pid: 1, controlUrl: `http://127.0.0.1:${await freePort()}`, adminToken: 'x' });
    await claimStateDir(stateDir);
    assert.equal(await pidOf(), process.pid);
  });

  it('refuses while a live server takes the connection and is slow to answer (a loaded machine)', async () => {
    const busy = createServer(() => {}); // takes each request and never answers
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    try {
      const { port } = busy.address() as AddressInfo;
      await record({ pid: 1, controlUrl: `http://127.0.0.1:${port}`, adminToken: 'x' });
      await assert.rejects(
        claimStateDir(stateDir),
        (error: unknown) =>
          error instanceof ServerRunningError && /already runs on the state dir .*\(pid 1; its page at/.test(error.message),
      );
      assert.equal(await pidOf(), 1, 'the record is still the first server');
    } finally {
      busy.closeAllConnections();
      busy.close();
    }
  });

  it('refuses while a live server is still starting, saying so', async () => {
    await record({ pid: 1 });
    await assert.rejects(
      claimStateDir(stateDir),
      (error: unknown) => error instanceof ServerRunningError && /pid 1, still starting/.test(error.message),
    );
    assert.equal(await findRunningServer(stateDir), undefined, 'a server still starting cannot be asked yet');
  });
});
