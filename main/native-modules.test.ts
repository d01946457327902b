// What building a native module lacks is found by running each program: one that fails is named,
// one that is slow to answer (a version manager's shim on a loaded machine) is not.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkNativeModules } from './native-modules.js';

describe('the build tools a native module lacks', () => {
  let bin: string;
  before(async () => {
    bin = await mkdtemp(join(tmpdir(), 'pw-build-tools-'));
    const programs: Record<string, string> = {
      'c++': 'exit 1', // there, but broken: named
      make: 'exec /bin/sleep 30', // slower than the check waits: not named
      python3: 'exit 0',
    };
    for (const [name, body] of Object.entries(programs)) {
      await writeFile(join(bin, name), `#!/bin/sh\n${body}\n`);
      await chmod(join(bin, name), 0o755);
    }
  });
  after(() => rm(bin, { recursive: true, force: true }));

  it('names a program that fails or is absent, never one that only answers slowly', async () => {
    const [, pty] = await checkNativeModules({
      load: () => Promise.reject(Object.assign(new Error('not here'), { code: 'ERR_MODULE_NOT_FOUND' })),
      env: { PATH: bin },
      packageRoot: bin,
      platform: 'linux',
    });
    assert.equal(pty!.name, 'node-pty');
    assert.ok(!pty!.loaded);
    const install = (pty!.fix ?? '').split(', then run')[0]!;
    assert.match(install, /g\+\+|C\+\+ compiler/, 'the failing compiler is named');
    assert.doesNotMatch(install, /make|python/i, install);
  });

  it('runs each program once per check, however many of the modules need it', async () => {
    const counting = await mkdtemp(join(tmpdir(), 'pw-build-tools-count-'));
    try {
      const log = join(counting, 'ran.log');
      for (const name of ['c++', 'make', 'python3', 'pkg-config']) {
        await writeFile(join(counting, name), `#!/bin/sh\necho "$(basename "$0") $*" >>${log}\nexit 1\n`);
        await chmod(join(counting, name), 0o755);
      }
      const modules = await checkNativeModules({
        load: () => Promise.reject(Object.assign(new Error('not here'), { code: 'ERR_MODULE_NOT_FOUND' })),
        env: { PATH: `${counting}:/usr/bin:/bin` },
        packageRoot: counting,
        platform: 'linux',
      });
      assert.deepEqual(
        modules.map((m) => m.loaded),
        [false, false],
      );
      const ran = (await readFile(log, 'utf8')).trim().split('\n').sort();
      assert.deepEqual(ran, [
        'c++ --version',
        'make --version',
        'pkg-config --exists libsecret-1',
        'pkg-config --version',
        'python3 --version',
      ]);
    } finally {
      await rm(counting, { recursive: true, force: true });
    }
  });
});
