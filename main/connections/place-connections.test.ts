import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../config.js';
import { openConnectionServices, type ConnectionServices } from '../connection-services.js';
import { placeFromRoot } from '../places/place-root.js';
import { LOCAL_PERSON } from '../places/user-id.js';
import { EncryptedFileSecretStore } from '../secrets/encrypted-file-store.js';

/*
 * What a place's connections show of its secrets follows every change once the change has ended,
 * however the reads of the secrets' names (each page refresh and agent call makes one) fall
 * around it. Real services on a real encrypted secrets file; the store's writes are held back on
 * a gate, so that a read falls inside the change every time.
 */
describe("a place's connections and the changes to its secrets", () => {
  let top: string;
  let services: ConnectionServices;
  let store: EncryptedFileSecretStore;
  const place = placeFromRoot('Crew/alpha');

  before(async () => {
    top = await mkdtemp(join(tmpdir(), 'place-connections-'));
    await mkdir(join(top, 'ws', 'Crew', 'alpha'), { recursive: true });
    await mkdir(join(top, 'state'), { mode: 0o700 });
    const env = { WORKSPACE_STATE_DIR: join(top, 'state'), WORKSPACE_REGISTRY_URL: '' };
    store = new EncryptedFileSecretStore({ stateDir: env.WORKSPACE_STATE_DIR });
    services = openConnectionServices(
      { ...loadConfig({}, env), workspaceRoot: join(top, 'ws') },
      { secrets: store, log: () => {}, redirectUrl: () => '/oauth/callback', env, appPorts: () => [] },
    );
  });
  after(async () => {
    await services.close();
    await rm(top, { recursive: true, force: true });
  });

  /** The state the place's list gives the connection now. */
  const stateOf = async (name: string) =>
    (await services.connections.list(LOCAL_PERSON, place, { waitMs: 0 })).find((c) => c.name === name)?.state;

  /** Runs `change` with the store's writes held until a list of the place has read the names, then let through. */
  async function withReadInside(change: () => Promise<void>): Promise<void> {
    const { set, delete: remove } = store;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    store.set = async (account, value) => (await gate, set.call(store, account, value));
    store.delete = async (account) => (await gate, remove.call(store, account));
    try {
      const changing = change();
      await services.connections.list(LOCAL_PERSON, place, { waitMs: 0 });
      release();
      await changing;
    } finally {
      store.set = set;
      store.delete = remove;
    }
  }

  it('shows a secret set, and a secret removed, at once, even when a read fell inside the change', async () => {
    await services.connections.setSecret(LOCAL_PERSON, place, 'TOKEN', 'first', { replace: false });
    // A server that exits at once: its state is what it is once its secret is there (not "needs-secret").
    const added = await services.connections.add(
      LOCAL_PERSON,
      place,
      { local: { command: process.execPath, args: ['-e', ''], env: { TOKEN: 'TOKEN' }, name: 'exits' } },
      { waitMs: 0 },
    );
    assert.notEqual(await stateOf(added.name), 'needs-secret');

    await withReadInside(() => services.connections.removeSecret(LOCAL_PERSON, place, 'TOKEN'));
    assert.equal(await stateOf(added.name), 'needs-secret', 'the removed secret is missed at once');

    await withReadInside(() => services.connections.setSecret(LOCAL_PERSON, place, 'TOKEN', 'second', { replace: false }));
    assert.notEqual(await stateOf(added.name), 'needs-secret', 'the secret set is seen at once');
    assert.deepEqual(await services.connections.secretNames(LOCAL_PERSON, place), ['TOKEN']);
  });
});
