/**
 * What each test file needs, read from the sources and the files they import (no list to keep):
 * - whether it needs the build (`dist/`: the bundled CLI, the page's files), so it waits for it;
 * - whether it runs on Node 22 too. The desktop app runs the host on Node 22 (Electron 45), the CLI
 *   on the user's Node. What can differ between two Nodes is the runtime under the code: native
 *   modules (keytar, node-pty), WebAssembly, and Node's modules that reach the operating system,
 *   the network or a child process. So the unit and integration tests whose code under test (the
 *   product modules they import, directly or not) uses one of those run on both Nodes; tests of
 *   plain logic (parsing, ranking, wording) run once. The e2e tests (a browser, the spawned CLI)
 *   run on the system's Node only;
 * - whether it drives Chromium (through test/support/chromium.ts), so that the run can share one.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';

/** Node's modules whose behaviour rests on the runtime and the OS, not only on JavaScript. */
const RUNTIME_MODULES = new Set(
  [
    'fs',
    'fs/promises',
    'child_process',
    'net',
    'dgram',
    'dns',
    'http',
    'https',
    'http2',
    'tls',
    'crypto',
    'os',
    'stream',
    'stream/promises',
    'stream/web',
    'zlib',
    'worker_threads',
    'vm',
    'v8',
    'module',
  ].flatMap((name) => [`node:${name}`, name]),
);
/** Modules loaded by name at runtime (optional native modules), and the runtime's WebAssembly. */
const RUNTIME_USE = /['"](keytar|node-pty)['"]|\b(WebAssembly)\./g;
/** A path into this repository's build output, as a string in code: `'dist'`, `'../dist/main/cli.js'`. */
const BUILD_PATH = /['"`](\.\.\/)*dist['"`/]/;
const PRODUCT = /^(main|common|preload)\//;
/** What a test that drives a browser imports it from. */
const CHROMIUM_SUPPORT = 'test/support/chromium.ts';

export interface TestPlan {
  file: string;
  needsBuild: boolean;
  onNode22: boolean;
  /**
   * What of the runtime its product code uses, that can differ between two Nodes: the native
   * modules (`keytar`, `node-pty`), `WebAssembly`, and Node's own modules (`node:fs`, ...).
   */
  runtimeUses: string[];
  usesChromium: boolean;
}

/** The relative and bare module specifiers a source imports (static, side-effect and literal dynamic imports). */
function specifiers(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm)].map((m) => m[2]!);
}

/** Plans each test file (paths relative to `root`). */
export async function planTests(root: string, files: string[]): Promise<TestPlan[]> {
  const texts = new Map<string, string | undefined>();
  const read = async (file: string): Promise<string | undefined> => {
    if (!texts.has(file)) texts.set(file, await readFile(join(root, file), 'utf8').catch(() => undefined));
    return texts.get(file);
  };
  /** The source files a file imports, as paths relative to the root (`.js` in a specifier names the `.ts` source). */
  const imports = async (file: string, text: string): Promise<string[]> => {
    const found: string[] = [];
    for (const spec of specifiers(text).filter((s) => s.startsWith('.'))) {
      const base = normalize(join(dirname(file), spec));
      for (const candidate of [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base]) {
        if ((await read(candidate)) !== undefined) {
          found.push(candidate);
          break;
        }
      }
    }
    return found;
  };
  const plans: TestPlan[] = [];
  for (const file of files) {
    let needsBuild = false;
    const runtimeUses = new Set<string>();
    const seen = new Set<string>();
    const queue = [file];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (seen.has(next)) continue;
      seen.add(next);
      const text = await read(next);
      if (text === undefined) continue;
      if (PRODUCT.test(next) && !next.endsWith('.test.ts')) {
        for (const [, native, wasm] of text.matchAll(RUNTIME_USE)) runtimeUses.add((native ?? wasm)!);
        for (const spec of specifiers(text)) if (RUNTIME_MODULES.has(spec)) runtimeUses.add(spec.replace(/^(node:)?/, 'node:'));
      } else {
        // The product finds its own files wherever it is installed; a test names the build's.
        needsBuild ||= BUILD_PATH.test(text);
      }
      queue.push(...(await imports(next, text)));
    }
    plans.push({
      file,
      needsBuild,
      onNode22: runtimeUses.size > 0 && !file.startsWith('e2e/'),
      runtimeUses: [...runtimeUses].sort(),
      usesChromium: seen.has(CHROMIUM_SUPPORT),
    });
  }
  return plans;
}
