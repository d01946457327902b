import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp, { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { writeFileAtomic } from '../state/atomic-write.js';
import { AgentTokenStore, APP_TOKEN_ISSUER, parseTokenLifetime, TokenInputError, UnknownTokenError } from './agent-tokens.js';
import { keyIdOf } from './signing-key.js';
import { TokenStoreError } from './token-file.js';

const DAY = 86_400;

describe('AgentTokenStore', () => {
  let stateDir: string;
  let store: AgentTokenStore;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'agent-tokens-'));
    store = new AgentTokenStore({ stateDir });
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('mints an HS256 JWT signed with the state dir key, with the documented claims', async () => {
    const created = await store.create({ name: 'build box', workspacePath: 'Workflow/release' });
    const key = new Uint8Array(await readFile(join(stateDir, 'agent-signing-key')));
    const { payload, protectedHeader } = await jwtVerify(created.token, key, { algorithms: ['HS256'] });

    assert.deepEqual(protectedHeader, { alg: 'HS256', typ: 'JWT', kid: keyIdOf(key) });
    assert.equal(payload.iss, APP_TOKEN_ISSUER);
    assert.equal(payload.sub, `token:${created.id}`);
    assert.equal(payload.jti, created.id);
    assert.equal(payload.workspace_path, 'Workflow/release');
    assert.equal(payload.exp! - payload.iat!, 30 * DAY, 'default lifetime is 30 days');
    assert.match(created.id, /^[0-9a-f]{16}$/);
    assert.equal(created.name, 'build box');
    assert.equal(created.createdAt, new Date(payload.iat! * 1000).toISOString());
    assert.equal(created.expiresAt, new Date(payload.exp! * 1000).toISOString());
    assert.equal((await store.signingKey()).keyId, keyIdOf(key));
  });

  it('keeps a versioned record of each token, mode 0600, without the token itself', async () => {
    const created = await store.create({ name: 'ci', expiresIn: '12h' });
    const path = join(stateDir, 'agent-tokens.json');
    const text = await readFile(path, 'utf8');
    assert.ok(!text.includes(created.token));
    assert.ok(!text.includes(created.token.split('.')[2]!), 'not even the signature');
    const { token: _token, ...record } = created;
    assert.deepEqual(JSON.parse(text), { version: 1, tokens: [record] });
    if (process.platform !== 'win32') assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('makes tokens that never expire when asked to', async () => {
    const created = await store.create({ name: 'forever', expiresIn: 'never' });
    assert.equal(created.expiresAt, undefined);
    assert.equal(decodeJwt(created.token).exp, undefined);
  });

  it('lists tokens oldest first without the token, and shows revocations', async () => {
    const a = await store.create({ name: 'a' });
    const b = await store.create({ name: 'b', expiresIn: '90m', workspacePath: '/srv/x' });
    await store.revoke(a.id);
    const list = await store.list();
    assert.deepEqual(
      list.map(({ id, name }) => ({ id, name })),
      [
        { id: a.id, name: 'a' },
        { id: b.id, name: 'b' },
      ],
    );
    assert.ok(list.every((entry) => !('token' in entry)));
    assert.ok(list[0]!.revokedAt);
    assert.deepEqual(list[1], { id: b.id, name: 'b', createdAt: b.createdAt, expiresAt: b.expiresAt, workspacePath: '/srv/x' });
  });

  it('reports the status a verifier needs: active, revoked, unknown', async () => {
    const created = await store.create({ name: 'x' });
    assert.equal(await store.status(created.id), 'active');
    await store.revoke(created.id);
    assert.equal(await store.status(created.id), 'revoked');
    assert.equal(await store.status('0123456789abcdef'), 'unknown');
  });

  it('keeps a tool search setting per token, read back by id; auto removes it', async () => {
    const created = await store.create({ name: 'x' });
    assert.equal(await store.toolSearch(created.id), 'auto');
    assert.equal((await store.setToolSearch(created.id, 'off')).toolSearch, 'off');
    assert.equal(await store.toolSearch(created.id), 'off');
    assert.equal((await new AgentTokenStore({ stateDir }).list())[0]?.toolSearch, 'off', 'kept in the file');
    assert.equal((await store.setToolSearch(created.id, 'auto')).toolSearch, undefined);
    assert.equal(await store.toolSearch(created.id), 'auto');
    await assert.rejects(store.setToolSearch('0123456789abcdef', 'on'), UnknownTokenError);
  });

  it('revoking twice keeps the first revocation time', async () => {
    const created = await store.create({ name: 'x' });
    const first = await store.revoke(created.id);
    const second = await store.revoke(created.id);
    assert.equal(second.revokedAt, first.revokedAt);
  });

  it('refuses to revoke an unknown id, echoing it only when it looks like an id', async () => {
    await assert.rejects(store.revoke('0123456789abcdef'), (error: Error) => {
      assert.ok(error instanceof UnknownTokenError);
      assert.match(error.message, /with id 0123456789abcdef/);
      return true;
    });
    const token = (await store.create({ name: 'x' })).token;
    await assert.rejects(store.revoke(token), (error: Error) => {
      assert.ok(error instanceof UnknownTokenError);
      assert.ok(!error.message.includes(token) && !error.message.includes(token.slice(0, 20)));
      return true;
    });
  });

  it('sees a revocation made by another process at once', async () => {
    const created = await store.create({ name: 'x' });
    assert.equal(await store.status(created.id), 'active');
    await new AgentTokenStore({ stateDir }).revoke(created.id);
    assert.equal(await store.status(created.id), 'revoked');
  });

  it('notices a change by another process that keeps the file size', async () => {
    const created = await store.create({ name: 'x' });
    assert.equal(await store.status(created.id), 'active');
    const path = join(stateDir, 'agent-tokens.json');
    const otherId = created.id === 'ffffffffffffffff' ? '0000000000000000' : 'ffffffffffffffff';
    const text = await readFile(path, 'utf8');
    await writeFileAtomic(path, text.replace(created.id, otherId));
    assert.equal(await store.status(created.id), 'unknown');
    assert.equal(await store.status(otherId), 'active');
  });

  it('treats tokens as unknown once the store file is deleted', async () => {
    const created = await store.create({ name: 'x' });
    assert.equal(await store.status(created.id), 'active');
    await rm(join(stateDir, 'agent-tokens.json'));
    assert.equal(await store.status(created.id), 'unknown');
  });

  it('re-reads the file before changing it, so another process’s tokens are kept', async () => {
    await store.list();
    const other = await new AgentTokenStore({ stateDir }).create({ name: 'other' });
    const mine = await store.create({ name: 'mine' });
    assert.deepEqual(
      (await new AgentTokenStore({ stateDir }).list()).map((t) => t.id),
      [other.id, mine.id],
    );
  });

  it('serializes concurrent creates and revokes in one process', async () => {
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => store.create({ name: `t${i}` })));
    await Promise.all(created.slice(0, 10).map((t) => store.revoke(t.id)));
    const list = await new AgentTokenStore({ stateDir }).list();
    assert.equal(list.length, 20);
    assert.equal(list.filter((t) => t.revokedAt).length, 10);
  });

  it('checks an unchanged store with one synchronous stat and no read', async () => {
    const created = await store.create({ name: 'x' });
    await store.status(created.id);
    const stats = mock.method(fs, 'statSync');
    const asyncStats = mock.method(fsp, 'stat');
    const opens = mock.method(fsp, 'open');
    syncBuiltinESMExports();
    try {
      for (let i = 0; i < 50; i++) assert.equal(await store.status(created.id), 'active');
      assert.equal(stats.mock.callCount(), 50);
      assert.equal(asyncStats.mock.callCount() + opens.mock.callCount(), 0, 'no round trip through the thread pool');
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
  });

  it('moves a corrupt store aside and says so, never emptying it silently', async () => {
    const created = await store.create({ name: 'x' });
    const path = join(stateDir, 'agent-tokens.json');
    await writeFile(path, '{"version": 1, "tokens": [', { mode: 0o600 });
    await assert.rejects(store.status(created.id), (error: Error) => {
      assert.ok(error instanceof TokenStoreError);
      assert.match(error.message, /was unreadable \(it is not valid JSON\) and was moved to .*agent-tokens\.json\.corrupt-/);
      return true;
    });
    const files = await readdir(stateDir);
    const aside = files.find((f) => f.startsWith('agent-tokens.json.corrupt-'));
    assert.ok(aside && !files.includes('agent-tokens.json'));
    assert.equal(await readFile(join(stateDir, aside), 'utf8'), '{"version": 1, "tokens": [');
    assert.equal(await store.status(created.id), 'unknown', 'its tokens are refused afterwards');
  });

  it('treats a file of the wrong shape as corrupt and names the problem', async () => {
    await writeFile(join(stateDir, 'agent-tokens.json'), JSON.stringify({ version: 1, tokens: [{ id: 'x' }] }));
    await assert.rejects(store.list(), /unreadable \(tokens\.0\.id: .*\) and was moved/);
  });

  it('leaves a file from a newer version in place and asks for an update', async () => {
    const path = join(stateDir, 'agent-tokens.json');
    await writeFile(path, JSON.stringify({ version: 2, tokens: [], more: true }));
    await assert.rejects(store.list(), (error: Error) => {
      assert.ok(error instanceof TokenStoreError);
      assert.match(error.message, /newer version of this app \(format version 2\)\. Update the app/);
      return true;
    });
    assert.deepEqual(await readdir(stateDir), ['agent-tokens.json']);
  });

  it('validates names', async () => {
    for (const name of ['', '   ', 'x'.repeat(65), 'tab\there', 'new\nline', 'bell\u0007']) {
      await assert.rejects(store.create({ name }), TokenInputError, JSON.stringify(name));
    }
    assert.equal((await store.create({ name: '  padded  ' })).name, 'padded');
    assert.equal((await store.create({ name: 'é'.repeat(64) })).name.length, 64);
    assert.equal((await store.create({ name: '🙂'.repeat(64) })).name, '🙂'.repeat(64), 'characters, not UTF-16 units');
    await assert.rejects(store.create({ name: '🙂'.repeat(65) }), TokenInputError);
    assert.equal((await store.create({ name: 'laptop — Zoë' })).name, 'laptop — Zoë');
  });

  it('validates workspace paths', async () => {
    for (const workspacePath of ['', 'a\u0000b', 'Crew/al\u202Eb', 'Crew/a\u200Bb', 'x'.repeat(4097)]) {
      await assert.rejects(store.create({ name: 'x', workspacePath }), /workspace path must be/);
    }
  });

  it('refuses an invalid lifetime before creating anything', async () => {
    await assert.rejects(store.create({ name: 'x', expiresIn: '1y' }), TokenInputError);
    assert.deepEqual(await store.list(), []);
  });

  it('dates tokens with the given clock, so they can expire', async () => {
    const past = new Date('2020-01-01T00:00:00.000Z');
    const created = await new AgentTokenStore({ stateDir, now: () => past }).create({ name: 'old', expiresIn: '1d' });
    assert.equal(created.createdAt, '2020-01-01T00:00:00.000Z');
    assert.equal(created.expiresAt, '2020-01-02T00:00:00.000Z');
  });

  it('uses the key source it is given', async () => {
    const key = new Uint8Array(32).fill(7);
    const custom = new AgentTokenStore({ stateDir, keySource: { load: async () => key } });
    const created = await custom.create({ name: 'x' });
    assert.equal(decodeProtectedHeader(created.token).kid, keyIdOf(key));
    await jwtVerify(created.token, key);
    assert.ok(!(await readdir(stateDir)).includes('agent-signing-key'));
  });

  it('tries the key source again after it failed', async () => {
    let calls = 0;
    const flaky = new AgentTokenStore({
      stateDir,
      keySource: {
        load: async () => {
          calls++;
          if (calls === 1) throw new Error('chmod it');
          return new Uint8Array(32);
        },
      },
    });
    await assert.rejects(flaky.create({ name: 'x' }), /chmod it/);
    await flaky.create({ name: 'x' });
    assert.equal(calls, 2);
  });
});

describe('parseTokenLifetime', () => {
  it('reads minutes, hours, days and never', () => {
    assert.equal(parseTokenLifetime('90m'), 90 * 60_000);
    assert.equal(parseTokenLifetime('12h'), 12 * 3_600_000);
    assert.equal(parseTokenLifetime('30d'), 30 * 86_400_000);
    assert.equal(parseTokenLifetime(' 3650D '), 3650 * 86_400_000);
    assert.equal(parseTokenLifetime('never'), null);
  });

  it('refuses anything else with an example of what works', () => {
    for (const text of ['', '0d', '30', 'd', '1.5h', '-1d', '1w', '3651d', '1e3m', 'forever']) {
      assert.throws(
        () => parseTokenLifetime(text),
        (error: Error) => {
          assert.ok(error instanceof TokenInputError, text);
          assert.match(error.message, /like 90m, 12h, 30d\), or "never"/);
          return true;
        },
      );
    }
  });
});
