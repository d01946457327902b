import assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';
import { after, before, describe, it } from 'node:test';
import { AccessDirectory } from '../places/access-directory.js';
import { agentTokenStore } from '../auth/app-token-store.js';
import { openSecretStore } from '../secrets/open-secret-store.js';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import type { Change } from '../../common/api/events.js';

// GET /api/events: the owner hears what changed, whichever process changed it, as it happens.

describe('the change events of the control plane', () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const heard: Change[] = [];
  const stream = new AbortController();

  before(async () => {
    fx = await startHost({ auth: false });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
    const response = await fetch(`${controlUrl}/api/events`, { headers: { Authorization: `Bearer ${adminToken}` }, signal: stream.signal });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    void (async () => {
      const parser = createParser({ onEvent: (event) => void (event.event === 'change' && heard.push(JSON.parse(event.data))) });
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // Aborted at the end.
      }
    })();
  });

  after(async () => {
    stream.abort();
    await fx?.close();
  });

  /** Resolves with how long it took to hear a change of `topic` after `change` resolved. */
  async function hear(topic: Change['topic'], change: () => Promise<unknown>): Promise<number> {
    heard.length = 0;
    await change();
    const done = performance.now();
    while (!heard.some((c) => c.topic === topic)) {
      if (performance.now() - done > 1_000) assert.fail(`no ${topic} change within 1 s; heard ${JSON.stringify(heard)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return performance.now() - done;
  }

  it('refuses anyone but the owner', async () => {
    assert.equal((await fetch(`${controlUrl}/api/events`)).status, 401);
  });

  it('tells of the access directory written as another process writes it (the CLI)', async () => {
    await hear('places', () => new AccessDirectory(fx.stateDir).setPlaceToolSearch('', 'on'));
  });

  it('tells of tokens made in another process', async () => {
    const secrets = await openSecretStore({ stateDir: fx.stateDir, env: { WORKSPACE_SECRET_STORE: 'file' } });
    await hear('tokens', () => agentTokenStore(fx.stateDir, secrets).create({ name: 'elsewhere' }));
  });

  it('tells of a tool call as it is recorded, and of the server stopping and starting', async () => {
    const { client } = await fx.connect();
    await hear('activity', () => client.callTool({ name: 'bash', arguments: { command: 'true' } }));
    await client.close();
    await hear('server', () => fx.host.stop());
    await hear('server', () => fx.host.start());
  });

  it('tells of a place secret saved through the API', async () => {
    const saved = await hear('secrets', () =>
      fetch(`${controlUrl}/api/secrets/SOME_KEY?workspace_path=`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ value: 'v' }),
      }),
    );
    assert.ok(saved < 1_000);
  });
});
