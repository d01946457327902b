// What a user's install gets: `npm i -g` of the package and the desktop app (electron-builder packs
// the runtime dependencies) carry dependencies and optionalDependencies, so those are only what the
// product loads; the package carries the built product only (no sources, tests or test tooling);
// and no installed package puts a `node` of its own before the user's, which `npm start` and every
// npm script would run instead.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PRODUCT = ['main', 'common', 'preload'];

/** The product's source files (not its tests). */
async function productSources(): Promise<string[]> {
  const texts: string[] = [];
  for (const dir of PRODUCT) {
    for (const entry of await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /\.c?ts$/.test(entry.name) && !entry.name.endsWith('.test.ts')) {
        texts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
      }
    }
  }
  return texts;
}

describe("the user's install", () => {
  it('has as runtime dependencies only packages the product loads', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const runtime = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies });
    const sources = (await productSources()).join('\n');
    // Imported by name (`from 'x'`, `from 'x/sub.js'`, `import('x')`), or named for a runtime import (the optional native modules).
    const unused = runtime.filter((name) => !new RegExp(`['"]${name.replace(/[/.]/g, '\\$&')}(/[^'"]*)?['"]`).test(sources));
    assert.deepEqual(unused, [], 'runtime dependencies that nothing in main/, common/ or preload/ loads: make them devDependencies');
  });

  it('links no `node` of its own into node_modules/.bin', async () => {
    const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { bin?: Record<string, string> }>;
    };
    const linking = Object.entries(lock.packages).filter(
      ([path, entry]) => path.split('node_modules/').length === 2 && entry.bin?.node !== undefined,
    );
    assert.deepEqual(
      linking.map(([path]) => path),
      [],
    );
  });

  it("leaves no installed package's install script unreviewed (package.json allowScripts)", async (t) => {
    // npm 12 skips the install script of a package allowScripts does not name (keytar's and node-pty's builds among
    // them); npm 11 lists such packages after every install, as a warning a new user meets first.
    const listed = await promisify(execFile)('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT }).catch(
      (error: { stderr?: string }) => error,
    );
    if (!('stdout' in listed)) return t.skip(`this npm has no install-scripts command (npm 11.18 or later): ${listed.stderr?.trim()}`);
    const { allowScripts } = JSON.parse(listed.stdout) as {
      allowScripts: Array<{ name: string; changes: Array<{ key: string; change: string }> }>;
    };
    const pending = allowScripts.flatMap(({ changes }) => changes.filter((c) => c.change === 'pending').map((c) => c.key));
    assert.deepEqual(pending, [], 'install scripts not reviewed: name each in allowScripts, true to run it, false to skip it');
  });

  it('packs the built product (with the sandbox launcher and the server render of the page) and its install check only: no sources, tests, benchmarks, other scripts or source maps', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    const files = (JSON.parse(stdout) as [{ files: { path: string }[] }])[0].files.map((file) => file.path);
    assert.ok(
      files.includes('dist/main/cli.js') && files.includes('dist/renderer/index.html'),
      `the CLI and the page are packed: ${files.length} files`,
    );
    const other = files.filter(
      (path) =>
        !/^(package\.json|README\.md|dist\/(main|common|preload|renderer|server-render|wasm)\/.+|dist\/native\/sandbox-enter|scripts\/check-native-modules\.mjs)$/.test(
          path,
        ) || /\.test\.js$|\.map$/.test(path),
    );
    assert.deepEqual(other, []);
  });
});
