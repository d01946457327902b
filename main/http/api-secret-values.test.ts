import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type UpstreamFixture } from '../../e2e/fixtures/upstream-server.js';
import { callApi, type ApiAnswer } from '../../test/support/control-api.js';
import { filesUnder } from '../../test/support/secrets.js';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { EncryptedFileSecretStore } from '../secrets/encrypted-file-store.js';

// A secret with CR/LF would end an HTTP header early, and the failed request's error would quote it.

const CRLF_VALUE = 'sk-crlf-40be9d\r\nX-Injected: 1';
const MARK = 'sk-crlf-40be9d';

describe('secret values with line breaks', () => {
  let fx: HostFixture;
  let upstream: UpstreamFixture;
  let controlUrl: string;
  let adminToken: string;
  const seen: string[] = [];
  const api = async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const answer = await callApi(controlUrl, adminToken, method, path, body);
    seen.push(answer.text);
    return answer;
  };

  before(async () => {
    upstream = await startUpstream({ name: 'keyed', apiKey: { header: 'X-Api-Key', value: 'sk-right' } });
    fx = await startHost({}, { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1', WORKSPACE_SECRET_STORE: 'file' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(async () => {
    await fx.close();
    await upstream.close();
  });

  it('refuses them when they are saved, with the reason, saving nothing', async () => {
    for (const value of [CRLF_VALUE, `${MARK}\n`, `${MARK}\0`]) {
      const answer = await api('PUT', '/secrets/KEY', { value });
      assert.equal(answer.status, 400);
      assert.match(answer.json.error.message, /^The secret was not saved: it contains (a line break \(CR or LF\)|a NUL character)/);
    }
    assert.deepEqual((await api('GET', '/secrets')).json, { names: [] });
  });

  it('never quotes one saved before they were refused, in any answer, log line or file', async () => {
    // Saved as an older version did: a valid save, then the value replaced in the store file itself.
    assert.equal((await api('PUT', '/secrets/OLD', { value: 'placeholder' })).status, 204);
    await new EncryptedFileSecretStore({ stateDir: fx.stateDir }).set(`place-secret:${encodeURIComponent('')}:OLD`, CRLF_VALUE);
    const added = await api('POST', '/mcp/place', {
      server: { url: upstream.url, name: 'Keyed', header: { name: 'X-Api-Key', secret: 'OLD' } },
    });
    assert.equal(added.status, 201, added.text);
    const connect = await api('POST', `/mcp/place/${added.json.connection.name}/connect`);
    assert.match(connect.json.error.message, /The secret OLD of This machine cannot be used: it contains a line break/);
    await api('GET', '/mcp/place');
    assert.ok(!upstream.requests.some((h) => 'x-injected' in h), 'no header was injected upstream');

    const files = (await filesUnder(fx.stateDir)).filter((f) => !f.endsWith('secrets.json'));
    const haystacks = [...seen, fx.logs.join('\n'), ...(await Promise.all(files.map((f) => readFile(f, 'utf8'))))];
    for (const text of haystacks) assert.ok(!text.includes(MARK), `the value leaked into: ${text.slice(0, 300)}`);
  });
});
