import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { type AddConnectionInput, ConnectionStore } from './connection-store.js';
import { builtPath } from '../../../test/support/built.js';
import { waitFor } from '../../../test/support/wait.js';
import { linear } from '../../../test/support/connection-store/linear.js';
import { ConnectionExistsError, ConnectionInputError, ConnectionNotFoundError, ConnectionStoreError } from './errors.js';
import { serverNameOf, storeIdOf } from './naming.js';

const run = promisify(execFile);
const supportFile = (name: string) => builtPath(new URL(`../../../test/support/connection-store/${name}`, import.meta.url));

/** Resolves with the next roots told to a listener of `store`, or rejects after `ms`. */
function nextChange(store: ConnectionStore, ms = 10_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no change told within ${ms} ms`));
    }, ms);
    const stop = store.onChange((roots) => {
      clearTimeout(timer);
      stop();
      resolve(roots);
    });
  });
}

describe('ConnectionStore', () => {
  let stateDir: string;
  let store: ConnectionStore;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'connection-store-'));
    store = new ConnectionStore({ stateDir });
  });
  afterEach(async () => {
    store.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  describe('add', () => {
    it('stores the connection under the place store id with its server name, and returns it', async () => {
      const before = Date.now();
      const added = await store.add(linear({ auth: { kind: 'header', header: 'X-Api-Key', prefix: 'Key ', secretName: 'LINEAR_KEY' } }));
      const storeId = storeIdOf('local', 'Crew/alpha');
      const name = `u${storeId.slice(0, 8)}__linear`;
      assert.equal(store.path, join(stateDir, 'personal-mcp', 'attachments.json'));
      assert.deepEqual(added, {
        name,
        catalogId: 'linear',
        displayName: 'Linear',
        url: 'https://mcp.linear.app/mcp',
        transport: 'streamable-http',
        auth: { kind: 'header', header: 'X-Api-Key', prefix: 'Key ', secretName: 'LINEAR_KEY' },
        addedAt: added.addedAt,
        owner: 'local',
        storeId,
        root: 'Crew/alpha',
      });
      assert.ok(Date.parse(added.addedAt) >= before - 1000 && Date.parse(added.addedAt) <= Date.now());
      const { owner: _owner, storeId: _storeId, root: _root, ...record } = added;
      assert.deepEqual(JSON.parse(await readFile(store.path, 'utf8')), {
        version: 1,
        stores: { [storeId]: { owner: 'local', root: 'Crew/alpha', connections: { [name]: record } } },
      });
    });

    it('allows one connection per person, place and catalog id', async () => {
      await store.add(linear());
      await assert.rejects(store.add(linear({ displayName: 'Linear again' })), (error: unknown) => {
        assert.ok(error instanceof ConnectionExistsError);
        assert.equal(error.message, 'local already added Linear (linear) to "Crew/alpha". Remove that connection first to add it again.');
        return true;
      });
      const others = [
        await store.add(linear({ owner: 'alice' })),
        await store.add(linear({ root: 'Crew/beta' })),
        await store.add(linear({ root: '' })),
        await store.add(linear({ catalogId: 'linear-2' })),
      ];
      assert.equal(new Set([serverNameOf(storeIdOf('local', 'Crew/alpha'), 'linear'), ...others.map((c) => c.name)]).size, 5);
      assert.equal(new Set(others.map((c) => c.storeId)).size, 4);
    });

    it('refuses what it cannot hold, writing nothing', async () => {
      const cases: [Partial<Extract<AddConnectionInput, { url: string }>>, RegExp][] = [
        [{ catalogId: 'Linear' }, /not a valid catalog id/],
        [{ catalogId: 'a'.repeat(33) }, /not a valid catalog id/],
        [{ root: 'Crew/alpha/' }, /not a place root/],
        [{ root: '/Crew/alpha' }, /not a place root/],
        [{ owner: '' }, /not a user id/],
        [{ displayName: '' }, /displayName/],
        [{ url: '' }, /url/],
        [{ transport: 'websocket' as 'sse' }, /transport/],
        [{ auth: { kind: 'header', header: 'X Key', secretName: 'K' } }, /auth\.header: not an HTTP header name/],
        [{ auth: { kind: 'header', header: 'X-Key', prefix: 'Bearer\r\nEvil: 1', secretName: 'K' } }, /auth\.prefix/],
        [{ auth: { kind: 'header', header: 'X-Key', secretName: '' } }, /auth\.secretName/],
        [{ auth: { kind: 'basic' } as unknown as AddConnectionInput['auth'] }, /auth/],
      ];
      for (const [overrides, message] of cases) {
        await assert.rejects(store.add(linear(overrides)), (error: unknown) => {
          assert.ok(error instanceof ConnectionInputError, `${JSON.stringify(overrides)}: ${String(error)}`);
          assert.match(error.message, message);
          return true;
        });
      }
      assert.deepEqual(await readdir(stateDir), []);
    });

    it('keeps nothing but the record fields, so no secret can ride along', async () => {
      const input = { ...linear({ auth: { kind: 'header', header: 'X-Key', secretName: 'K' } }), token: 'sekrit-1' };
      (input.auth as Record<string, unknown>).value = 'sekrit-2';
      const added = await store.add(input);
      assert.ok(!('token' in added));
      const text = await readFile(store.path, 'utf8');
      assert.ok(!text.includes('sekrit'));
    });

    it('refuses a person and place whose place:<user>:<root> string reads like another pair', async () => {
      await store.add(linear({ owner: 'u', root: 'a/b:c' }));
      await assert.rejects(store.add(linear({ owner: 'u:a/b', root: 'c' })), (error: unknown) => {
        assert.ok(error instanceof ConnectionInputError);
        assert.match(error.message, /already used by u in "a\/b:c"/);
        return true;
      });
      assert.equal((await store.list('a/b:c')).length, 1);
      assert.deepEqual(await store.list('c'), []);
    });

    it('refuses a server name that another person already has in the place', async () => {
      // Found by search: their store ids in Crew/alpha share the first 8 hex digits.
      const name = serverNameOf(storeIdOf('person-6358', 'Crew/alpha'), 'linear');
      assert.equal(serverNameOf(storeIdOf('person-30409', 'Crew/alpha'), 'linear'), name);
      await store.add(linear({ owner: 'person-6358' }));
      await assert.rejects(store.add(linear({ owner: 'person-30409' })), (error: unknown) => {
        assert.ok(error instanceof ConnectionExistsError);
        assert.match(error.message, new RegExp(`${name} is already used in "Crew/alpha" by a connection of person-6358`));
        return true;
      });
      // In another place the two do not meet.
      await store.add(linear({ owner: 'person-30409', root: 'Crew/beta' }));
    });
  });

  describe('reading', () => {
    it('lists a place across all people, by display name then owner, with each owner and store id', async () => {
      await store.add(linear({ owner: 'zed', catalogId: 'notion', displayName: 'Notion' }));
      await store.add(linear({ owner: 'bob' }));
      await store.add(linear({ owner: 'alice' }));
      await store.add(linear({ owner: 'alice', catalogId: 'asana', displayName: 'asana' }));
      await store.add(linear({ owner: 'alice', root: 'Crew/beta', catalogId: 'sentry', displayName: 'Sentry' }));
      const listed = await store.list('Crew/alpha');
      assert.deepEqual(
        listed.map((c) => [c.displayName, c.owner]),
        [
          ['asana', 'alice'],
          ['Linear', 'alice'],
          ['Linear', 'bob'],
          ['Notion', 'zed'],
        ],
      );
      for (const connection of listed) {
        assert.equal(connection.storeId, storeIdOf(connection.owner, 'Crew/alpha'));
        assert.equal(connection.name, serverNameOf(connection.storeId, connection.catalogId));
      }
      assert.deepEqual(
        (await store.list('Crew/beta')).map((c) => c.catalogId),
        ['sentry'],
      );
      assert.deepEqual(await store.list('Crew'), []);
      await assert.rejects(store.list('Crew/alpha/'), ConnectionInputError);
    });

    it('reads an absent file as no connections', async () => {
      assert.deepEqual(await store.list('Crew/alpha'), []);
      assert.deepEqual(await store.roots(), []);
      assert.equal(await store.get('Crew/alpha', 'u00000000__linear'), undefined);
    });

    it('gets a connection of a place by its server name, whoever added it', async () => {
      const added = await store.add(linear({ owner: 'alice' }));
      assert.deepEqual(await store.get('Crew/alpha', added.name), added);
      assert.equal(await store.get('Crew/beta', added.name), undefined, 'only in its own place');
      assert.equal(await store.get('Crew/alpha', 'linear'), undefined);
    });

    it('gives the roots of the places that have connections', async () => {
      await store.add(linear({ root: 'Workflow/release' }));
      await store.add(linear({ root: '' }));
      await store.add(linear({ root: 'Crew/alpha', owner: 'alice' }));
      await store.add(linear({ root: 'Crew/alpha', owner: 'bob' }));
      assert.deepEqual(await store.roots(), ['', 'Crew/alpha', 'Workflow/release']);
    });

    it('sees what another process wrote', async () => {
      assert.deepEqual(await store.list('Crew/alpha'), []);
      const added = await new ConnectionStore({ stateDir }).add(linear());
      assert.deepEqual(await store.list('Crew/alpha'), [added]);
      assert.deepEqual(await store.get('Crew/alpha', added.name), added);
    });

    it('reports a corrupt file to its caller, kept aside', async () => {
      await mkdir(join(stateDir, 'personal-mcp'));
      await writeFile(store.path, '{ nope');
      await assert.rejects(store.list('Crew/alpha'), (error: unknown) => {
        assert.ok(error instanceof ConnectionStoreError);
        assert.match(error.message, /was moved to .*attachments\.json\.corrupt-.* because it was unreadable \(it is not valid JSON\)/);
        return true;
      });
      // Not silently emptied: refused until someone deals with the aside.
      await assert.rejects(store.add(linear()), ConnectionStoreError);
      await assert.rejects(store.roots(), ConnectionStoreError);
      const files = await readdir(join(stateDir, 'personal-mcp'));
      assert.equal(files.length, 1);
      assert.match(files[0]!, /^attachments\.json\.corrupt-/);
    });
  });

  describe('remove', () => {
    it('removes a connection and gives it back; the store goes when its last connection does', async () => {
      const kept = await store.add(linear({ owner: 'alice' }));
      const added = await store.add(linear());
      assert.deepEqual(await store.remove({ root: 'Crew/alpha', name: added.name, owner: 'local' }), added);
      assert.deepEqual(await store.list('Crew/alpha'), [kept]);
      const { stores } = JSON.parse(await readFile(store.path, 'utf8'));
      assert.deepEqual(Object.keys(stores), [kept.storeId]);
      await store.remove({ root: 'Crew/alpha', name: kept.name, owner: 'alice' });
      assert.deepEqual(JSON.parse(await readFile(store.path, 'utf8')), { version: 1, stores: {} });
      assert.deepEqual(await store.roots(), []);
    });

    it('says which place has no such connection', async () => {
      const added = await store.add(linear());
      const attempts: [{ root: string; name: string; owner: string }, string][] = [
        [
          { root: 'Crew/alpha', name: 'u00000000__linear', owner: 'local' },
          '"Crew/alpha" has no MCP connection u00000000__linear added by local.',
        ],
        [{ root: 'Crew/alpha', name: added.name, owner: 'alice' }, `"Crew/alpha" has no MCP connection ${added.name} added by alice.`],
        [{ root: '', name: added.name, owner: 'local' }, `"This machine" has no MCP connection ${added.name} added by local.`],
      ];
      for (const [target, message] of attempts) {
        await assert.rejects(store.remove(target), (error: unknown) => {
          assert.ok(error instanceof ConnectionNotFoundError);
          assert.equal(error.message, message);
          return true;
        });
      }
      assert.deepEqual(await store.list('Crew/alpha'), [added]);
    });
  });

  describe('changes', () => {
    it('tells listeners which roots its own adds and removes changed, and nothing for a refused one', async () => {
      const told: string[][] = [];
      const stop = store.onChange((roots) => told.push(roots));
      const added = await store.add(linear());
      await store.add(linear({ root: '' }));
      await assert.rejects(store.add(linear()), ConnectionExistsError);
      await store.remove({ root: 'Crew/alpha', name: added.name, owner: 'local' });
      stop();
      await store.add(linear({ root: 'Crew/beta' }));
      assert.deepEqual(told, [['Crew/alpha'], [''], ['Crew/alpha']]);
    });

    it('tells nothing more when it reads back what it wrote', async () => {
      const told: string[][] = [];
      store.onChange((roots) => told.push(roots));
      // An optional field given as undefined is in what was written here, and absent from the file.
      await store.add(linear({ auth: { kind: 'header', header: 'X-Key', prefix: undefined, secretName: 'K' } }));
      await store.list('Crew/alpha');
      await new ConnectionStore({ stateDir }).add(linear({ root: 'Crew/beta' }));
      await store.list('Crew/alpha');
      assert.deepEqual(told, [['Crew/alpha'], ['Crew/beta']]);
    });

    it('polls for other processes while watching, telling only the roots that changed, until closed', async () => {
      const watcher = new ConnectionStore({ stateDir, pollIntervalMs: 20 });
      await store.add(linear());
      await watcher.watch();
      try {
        const other = new ConnectionStore({ stateDir });
        const change = nextChange(watcher);
        await other.add(linear({ root: 'Crew/beta' }));
        assert.deepEqual(await change, ['Crew/beta']);

        const removal = nextChange(watcher);
        await other.remove({ root: 'Crew/alpha', name: serverNameOf(storeIdOf('local', 'Crew/alpha'), 'linear'), owner: 'local' });
        assert.deepEqual(await removal, ['Crew/alpha']);

        watcher.close();
        const told: string[][] = [];
        watcher.onChange((roots) => told.push(roots));
        // A watcher still open, polling as often, sees two changes one after the other: its second
        // poll came at least one interval after the first change, so the closed one, were it still
        // polling, would have told that change by then.
        const open = new ConnectionStore({ stateDir, pollIntervalMs: 20 });
        await open.watch();
        try {
          const gamma = nextChange(open);
          await other.add(linear({ root: 'Crew/gamma' }));
          assert.deepEqual(await gamma, ['Crew/gamma']);
          const delta = nextChange(open);
          await other.add(linear({ root: 'Crew/delta' }));
          assert.deepEqual(await delta, ['Crew/delta']);
        } finally {
          open.close();
        }
        assert.deepEqual(told, []);
      } finally {
        watcher.close();
      }
    });

    it('tells nothing when a write leaves every place as it was', async () => {
      const watcher = new ConnectionStore({ stateDir, pollIntervalMs: 20 });
      await store.add(linear());
      await store.add(linear({ catalogId: 'notion', displayName: 'Notion' }));
      await watcher.watch();
      try {
        const told: string[][] = [];
        watcher.onChange((roots) => told.push(roots));
        // Same content, every key order reversed and no formatting: a new file, the same connection sets.
        const reversed = (value: unknown): unknown =>
          value !== null && typeof value === 'object'
            ? Object.fromEntries(
                Object.entries(value)
                  .reverse()
                  .map(([key, inner]) => [key, reversed(inner)]),
              )
            : value;
        await writeFile(store.path, JSON.stringify(reversed(JSON.parse(await readFile(store.path, 'utf8')))));
        // The watcher reads the new file (a poll may read it first: then this read finds it known);
        // either read compares it with what was told before.
        await watcher.list('Crew/alpha');
        assert.deepEqual(told, []);
        // The same watcher tells a real change: the silence above was a comparison, not a watcher that never looked.
        await new ConnectionStore({ stateDir }).add(linear({ root: 'Crew/beta' }));
        await watcher.list('Crew/alpha');
        assert.deepEqual(told, [['Crew/beta']]);
      } finally {
        watcher.close();
      }
    });

    it('tells listeners of another process change it notices when reading', async () => {
      await store.list('Crew/alpha');
      const change = nextChange(store);
      await new ConnectionStore({ stateDir }).add(linear({ root: 'Workflow/release' }));
      await store.list('Crew/alpha');
      assert.deepEqual(await change, ['Workflow/release']);
    });

    it('moves aside a corrupt file found by the poll, and the next reader is told', async () => {
      const watcher = new ConnectionStore({ stateDir, pollIntervalMs: 10 });
      await store.add(linear());
      await watcher.watch();
      try {
        await writeFile(store.path, 'garbage');
        await waitFor(
          () =>
            readFile(store.path).then(
              () => false,
              () => true,
            ),
          10_000,
          'the poll to move the file aside',
        );
        await assert.rejects(watcher.list('Crew/alpha'), (error: unknown) => {
          assert.ok(error instanceof ConnectionStoreError);
          return error.movedTo !== undefined;
        });
      } finally {
        watcher.close();
      }
    });

    it('keeps the write and the other listeners when a listener throws, and lets its error surface', async () => {
      const child = await run(process.execPath, [supportFile('throwing-listener.ts'), stateDir]).then(
        () => assert.fail('the listener error was swallowed'),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      assert.notEqual(child.code, 0);
      assert.match(child.stderr, /listener broke/);
      assert.match(child.stdout, /second listener: Crew\/alpha/);
      assert.equal((await store.list('Crew/alpha')).length, 1);
    });
  });

  describe('concurrency', () => {
    const catalog = (i: number) => linear({ catalogId: `server-${i}`, displayName: `Server ${i}` });

    it('keeps all of 50 concurrent adds in one process', async () => {
      const told: string[][] = [];
      store.onChange((roots) => told.push(roots));
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.add(catalog(i))));
      assert.equal((await store.list('Crew/alpha')).length, 50);
      assert.equal(told.length, 50);
      // One at a time, in the order asked: the file holds them in that order.
      const { stores } = JSON.parse(await readFile(store.path, 'utf8'));
      assert.deepEqual(
        Object.values(stores[storeIdOf('local', 'Crew/alpha')].connections).map((c) => (c as { catalogId: string }).catalogId),
        Array.from({ length: 50 }, (_, i) => `server-${i}`),
      );
      assert.deepEqual(await readdir(join(stateDir, 'personal-mcp')), ['attachments.json']);
    });

    it('keeps all adds of two stores that share only the file', async () => {
      const other = new ConnectionStore({ stateDir });
      await Promise.all([
        ...Array.from({ length: 25 }, (_, i) => store.add(catalog(i))),
        ...Array.from({ length: 25 }, (_, i) => other.add(catalog(100 + i))),
      ]);
      assert.equal((await store.list('Crew/alpha')).length, 50);
    });

    it('keeps all adds and removes interleaved in one process', async () => {
      const first = await Promise.all(Array.from({ length: 10 }, (_, i) => store.add(catalog(i))));
      await Promise.all([
        ...first.map((c) => store.remove({ root: 'Crew/alpha', name: c.name, owner: 'local' })),
        ...Array.from({ length: 10 }, (_, i) => store.add(catalog(10 + i))),
      ]);
      assert.deepEqual(
        (await store.list('Crew/alpha')).map((c) => c.catalogId).sort(),
        Array.from({ length: 10 }, (_, i) => `server-${10 + i}`).sort(),
      );
    });

    it('keeps all concurrent adds of two processes', async () => {
      const workers = ['one', 'two'].map((prefix) =>
        spawn(process.execPath, [supportFile('add-worker.ts'), stateDir, prefix, '25'], {
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      );
      const exits = workers.map((worker) => once(worker, 'exit'));
      try {
        // Both loaded and waiting, then both told to go at once.
        await Promise.all(workers.map((worker) => once(worker.stdout!, 'data')));
        for (const worker of workers) worker.stdin!.write('go\n');
        // Exiting on their own also shows that a watching store never keeps a process alive.
        const exited = Promise.all(exits);
        const late = sleep(20_000, undefined, { ref: false }).then(() => assert.fail('the workers did not exit'));
        assert.deepEqual(await Promise.race([exited, late]), [
          [0, null],
          [0, null],
        ]);
      } finally {
        for (const worker of workers) if (worker.exitCode === null) worker.kill();
      }
      const listed = await store.list('Crew/alpha');
      assert.equal(listed.length, 50);
      assert.equal(listed.filter((c) => c.catalogId.startsWith('one-')).length, 25);
      assert.deepEqual(await readdir(join(stateDir, 'personal-mcp')), ['attachments.json']);
    });

    it('recovers a lock left by a process that died', async () => {
      const child = spawn(process.execPath, ['-e', '']);
      await once(child, 'exit');
      await mkdir(join(stateDir, 'personal-mcp'));
      await writeFile(`${store.path}.lock`, JSON.stringify({ pid: child.pid, host: hostname(), token: 'gone' }));
      const patient = new ConnectionStore({ stateDir, lock: { staleMs: 60_000, timeoutMs: 2_000 } });
      await patient.add(linear());
      assert.deepEqual(await readdir(join(stateDir, 'personal-mcp')), ['attachments.json']);
    });
  });
});
