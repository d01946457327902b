import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync } from 'node:fs';
import fsp, { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, mock } from 'node:test';
import { LOCAL_VERDICT_MS, LocalFileSystems } from './local-file-system.js';

let dir: string;

/** The answer for the file at `path`, asked with its open descriptor as read.ts does. */
async function isLocal(systems: LocalFileSystems, path: string): Promise<boolean> {
  const fd = openSync(path, 'r');
  try {
    return await systems.isLocal(fstatSync(fd).dev, fd);
  } finally {
    closeSync(fd);
  }
}

describe('LocalFileSystems', { skip: process.platform !== 'linux' }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'local-fs-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('says yes for a file in the temp folder (a disk or tmpfs), no for /proc', async () => {
    const path = join(dir, 'file.txt');
    await writeFile(path, 'x');
    const systems = new LocalFileSystems();
    assert.equal(await isLocal(systems, path), true);
    assert.equal(await isLocal(systems, '/proc/self/status'), false);
  });

  it('asks the kernel once per device, and again once the answer is a minute old', async () => {
    const path = join(dir, 'asked.txt');
    await writeFile(path, 'x');
    let now = 1_000_000;
    const systems = new LocalFileSystems(() => now);
    const statfs = mock.method(fsp, 'statfs');
    syncBuiltinESMExports();
    try {
      for (let i = 0; i < 5; i++) assert.equal(await isLocal(systems, path), true);
      assert.equal(statfs.mock.callCount(), 1);
      now += LOCAL_VERDICT_MS + 1;
      assert.equal(await isLocal(systems, path), true);
      assert.equal(statfs.mock.callCount(), 2);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
  });

  it('says no when the file system cannot be asked', async () => {
    const statfs = mock.method(fsp, 'statfs', async () => {
      throw Object.assign(new Error('EIO'), { code: 'EIO' });
    });
    syncBuiltinESMExports();
    try {
      const path = join(dir, 'unknown.txt');
      await writeFile(path, 'x');
      assert.equal(await isLocal(new LocalFileSystems(), path), false);
      assert.equal(statfs.mock.callCount(), 1);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
  });
});
