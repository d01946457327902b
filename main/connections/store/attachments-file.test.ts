import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { testClock } from '../../../test/support/clock.js';
import { RACY_MS } from '../../state/file-stamp.js';
import { type Attachments, AttachmentsFile, type ConnectionRecord } from './attachments-file.js';
import { ConnectionStoreError } from './errors.js';
import { serverNameOf, storeIdOf } from './naming.js';

const storeId = storeIdOf('local', 'Crew/alpha');
const name = serverNameOf(storeId, 'linear');
const record: ConnectionRecord = {
  name,
  catalogId: 'linear',
  displayName: 'Linear',
  url: 'https://mcp.linear.app/mcp',
  transport: 'streamable-http',
  auth: { kind: 'oauth' },
  addedAt: '2026-09-29T10:00:00.000Z',
};
const valid: Attachments = { version: 1, stores: { [storeId]: { owner: 'local', root: 'Crew/alpha', connections: { [name]: record } } } };

describe('AttachmentsFile', () => {
  let dir: string;
  let path: string;
  let file: AttachmentsFile;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'attachments-'));
    path = join(dir, 'personal-mcp', 'attachments.json');
    file = new AttachmentsFile(path);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const writeRaw = async (content: unknown) => {
    await mkdir(join(dir, 'personal-mcp'), { recursive: true });
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  };

  it('reads an absent file as empty, without creating anything', async () => {
    assert.deepEqual((await file.read()).attachments, { version: 1, stores: {} });
    assert.deepEqual(await readdir(dir), []);
  });

  it('writes atomically what the change returns: mode 0600 in a 0700 folder, no lock left', async () => {
    const { result, before, after } = await file.update((current) => {
      assert.deepEqual(current, { version: 1, stores: {} });
      return [valid, 'done'];
    });
    assert.equal(result, 'done');
    assert.deepEqual(before.attachments, { version: 1, stores: {} });
    assert.deepEqual(after.attachments, valid);
    assert.ok(after.generation > before.generation);
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), valid);
    if (process.platform !== 'win32') {
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      assert.equal((await stat(join(dir, 'personal-mcp'))).mode & 0o777, 0o700);
    }
    assert.deepEqual(await readdir(join(dir, 'personal-mcp')), ['attachments.json']);
    assert.deepEqual((await file.read()).attachments, valid);
  });

  it('hands the change a copy, and writes nothing when it throws', async () => {
    await writeRaw(valid);
    const { attachments } = await file.read();
    await assert.rejects(
      file.update((current) => {
        current.stores = {};
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(attachments, valid, 'what a reader holds is untouched');
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), valid);
    assert.deepEqual(await readdir(join(dir, 'personal-mcp')), ['attachments.json']);
  });

  it('sees another writer at once', async () => {
    await writeRaw(valid);
    const first = await file.read();
    await new AttachmentsFile(path).update(() => [{ version: 1, stores: {} }, undefined]);
    const second = await file.read();
    assert.deepEqual(second.attachments, { version: 1, stores: {} });
    assert.ok(second.generation > first.generation);
  });

  it('costs only a stat once the file has settled, and re-reads a file changed moments ago', async () => {
    const clock = testClock();
    const file = new AttachmentsFile(path, {}, clock.now);
    await writeRaw(valid);
    const first = await file.read();
    // Within two seconds of a change, a later change might not show in the stat: read again.
    assert.ok((await file.read()).generation > first.generation);
    clock.advance(RACY_MS + 100);
    const settled = await file.read();
    assert.equal((await file.read()).generation, settled.generation, 'the same read while the file is unchanged');
  });

  it('drops unknown fields, so nothing else rides along', async () => {
    await writeRaw({
      version: 1,
      stores: { [storeId]: { owner: 'local', root: 'Crew/alpha', connections: { [name]: { ...record, token: 'sekrit' } } } },
    });
    assert.deepEqual((await file.read()).attachments, valid);
  });

  const corruptions: [string, unknown, RegExp][] = [
    ['not JSON', '{"version": 1, "stores": {', /not valid JSON/],
    [
      'a wrong field type',
      { version: 1, stores: { [storeId]: { ...valid.stores[storeId], connections: { [name]: { ...record, transport: 'ws' } } } } },
      /transport/,
    ],
    ['version 0', { ...valid, version: 0 }, /version/],
    [
      'a server name under another key',
      { version: 1, stores: { [storeId]: { ...valid.stores[storeId], connections: { other: record } } } },
      /server name does not match/,
    ],
    [
      'a server name of another catalog id',
      { version: 1, stores: { [storeId]: { ...valid.stores[storeId], connections: { [name]: { ...record, catalogId: 'notion' } } } } },
      /server name does not match/,
    ],
    [
      'an owner edited by hand',
      { version: 1, stores: { [storeId]: { ...valid.stores[storeId], owner: 'mallory' } } },
      /store id does not match/,
    ],
    ['an invalid root', { version: 1, stores: { [storeId]: { ...valid.stores[storeId], root: '/etc' } } }, /not a place root/],
    [
      'a header auth without its secret name',
      {
        version: 1,
        stores: {
          [storeId]: { ...valid.stores[storeId], connections: { [name]: { ...record, auth: { kind: 'header', header: 'X-Key' } } } },
        },
      },
      /secretName/,
    ],
  ];
  for (const [what, content, problem] of corruptions) {
    it(`moves aside a file with ${what} and says so`, async () => {
      await writeRaw(content);
      const original = await readFile(path, 'utf8');
      const error = await file.read().then(
        () => assert.fail('read a corrupt file'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof ConnectionStoreError);
      assert.match(error.message, problem);
      assert.equal(error.path, path);
      assert.match(error.movedTo!, /attachments\.json\.corrupt-\d{4}-\d\d-\d\dT[\d-]+Z$/);
      assert.ok(error.message.includes(path) && error.message.includes(error.movedTo!));
      assert.match(error.message, /move it back/);
      assert.equal(await readFile(error.movedTo!, 'utf8'), original, 'kept, not emptied');
      await assert.rejects(stat(path), { code: 'ENOENT' });
    });
  }

  it('reports a corrupt file found by update, and writes nothing', async () => {
    await writeRaw('nonsense');
    await assert.rejects(
      file.update(() => [valid, undefined]),
      ConnectionStoreError,
    );
    await assert.rejects(stat(path), { code: 'ENOENT' });
  });

  it('keeps refusing, here and in other processes, until the aside is fixed and moved back or deleted', async () => {
    await writeRaw('nonsense');
    const first = await file.read().catch((error: ConnectionStoreError) => error);
    assert.ok(first instanceof ConnectionStoreError);
    for (const reader of [file, new AttachmentsFile(path)]) {
      await assert.rejects(reader.read(), (error: ConnectionStoreError) => {
        assert.equal(error.movedTo, first.movedTo);
        assert.match(error.message, /was moved to .* because it was unreadable \(it is not valid JSON\)\. .*move it back .*or delete it/);
        return true;
      });
    }
    await assert.rejects(
      file.update(() => [valid, undefined]),
      ConnectionStoreError,
    );
    await assert.rejects(stat(path), { code: 'ENOENT' }, 'update wrote nothing');

    await writeFile(first.movedTo!, JSON.stringify(valid));
    await assert.rejects(
      file.read(),
      (error: ConnectionStoreError) => !/\(it is not valid JSON\)/.test(error.message),
      'fixed, not yet back',
    );
    await rename(first.movedTo!, path);
    assert.deepEqual((await file.read()).attachments, valid);

    await writeFile(path, 'nonsense again');
    const second = await file.read().catch((error: ConnectionStoreError) => error);
    assert.ok(second instanceof ConnectionStoreError);
    await rm(second.movedTo!);
    assert.deepEqual((await file.read()).attachments, { version: 1, stores: {} });
  });

  it('never moves one corrupt file over another moved aside in the same millisecond', async (t) => {
    t.mock.method(Date.prototype, 'toISOString', () => '2026-09-29T10:00:00.000Z');
    const earlier = `${path}.corrupt-2026-09-29T10-00-00-000Z`;
    await writeRaw('nonsense');
    await writeFile(earlier, 'the earlier one');
    const error = await file.read().catch((caught: ConnectionStoreError) => caught);
    assert.ok(error instanceof ConnectionStoreError);
    assert.equal(error.movedTo, `${earlier}-1`);
    assert.equal(await readFile(earlier, 'utf8'), 'the earlier one');
    assert.equal(await readFile(`${earlier}-1`, 'utf8'), 'nonsense');
  });

  it('refuses a "__proto__" key, which JSON would turn into a prototype', async () => {
    await writeRaw(`{"version": 1, "stores": {"__proto__": ${JSON.stringify(valid.stores[storeId])}}}`);
    await assert.rejects(file.read(), /contains a "__proto__" key/);
  });

  it('refuses a file of a newer version and leaves it as it is', async () => {
    await writeRaw({ version: 2, stores: {}, more: true });
    for (const attempt of [() => file.read(), () => new AttachmentsFile(path).read(), () => file.update(() => [valid, undefined])]) {
      await assert.rejects(attempt(), (error: unknown) => {
        assert.ok(error instanceof ConnectionStoreError);
        assert.match(error.message, /newer version of this app \(format version 2\)/);
        assert.match(error.message, /update this app/);
        assert.equal(error.movedTo, undefined);
        return true;
      });
    }
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { version: 2, stores: {}, more: true });
    assert.deepEqual(await readdir(join(dir, 'personal-mcp')), ['attachments.json']);
  });
});
