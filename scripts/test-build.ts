/**
 * Compiles the TypeScript the tests load into plain JavaScript under .test-build/, one .js file per
 * source file at the same relative path, so that every test process starts on plain Node: no
 * loader in each of ~150 processes (tsx's costs 0.6–0.8 s a process).
 *
 * Each file is transpiled alone, as tsx does (esbuild, types stripped, not checked: the type check
 * is `npm run typecheck`), with `import.meta.url` set to the source file's URL: what a test or
 * module finds beside itself (fixtures, README.md, package.json, a `.ts` it hands to a child
 * process) is found where it is in the source tree. A source map per file, so that stack traces
 * (`--enable-source-maps`, in a run of files chosen by hand) name the .ts file and line.
 *
 * Only sources whose size or modification time changed since the last build are compiled again;
 * outputs whose source is gone are removed.
 */
import { transform, version as esbuildVersion } from 'esbuild';
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR } from '../test/support/built.js';
import { buildLauncher } from './build-launcher.js';
import { buildWasm } from './build-wasm.js';

/** The folders whose TypeScript tests load (tests, fixtures, the product, the page's plain modules, scripts). */
const SOURCE_ROOTS = ['main', 'common', 'preload', 'renderer', 'test', 'e2e', 'scripts', 'bench'];
/** Generated output inside the source roots, never sources. */
const SKIPPED = new Set(['node_modules', 'out']);

/** What the output depends on besides each source: a change recompiles everything. */
const COMPILER = { esbuild: esbuildVersion, target: 'node20.19', format: 'esm', rev: 1 } as const;

/** Sources (.ts, .tsx, .mts; not .d.ts) and JSON files the sources import, relative to `root`. */
async function sources(root: string): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) await walk(path);
      } else if (/\.(m?ts|tsx|json)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        found.push(path);
      }
    }
  }
  for (const dir of SOURCE_ROOTS) await walk(dir);
  return found;
}

/** The output path of a source, relative to the build folder. */
function outputOf(source: string): string {
  return source.replace(/\.tsx?$/, '.js').replace(/\.mts$/, '.mjs');
}

/** What identifies a version of a file cheaply: its size and modification time. */
async function version(path: string): Promise<string> {
  const stats = await stat(path);
  return `${stats.size}:${stats.mtimeMs}`;
}

async function compile(root: string, source: string, out: string): Promise<void> {
  const file = join(root, source);
  const code = await readFile(file, 'utf8');
  await mkdir(dirname(out), { recursive: true });
  if (source.endsWith('.json')) {
    await copyFile(file, out);
    return;
  }
  const result = await transform(code, {
    loader: source.endsWith('.tsx') ? 'tsx' : 'ts',
    format: 'esm',
    target: COMPILER.target,
    platform: 'node',
    sourcemap: 'external',
    sourcefile: file,
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(file).href) },
    // As tsconfig.json: ES2022 class fields; the page's JSX as React's automatic runtime.
    tsconfigRaw: { compilerOptions: { target: 'ES2022', jsx: 'react-jsx' } },
    logLevel: 'silent',
  });
  const map = JSON.parse(result.map) as { sources: string[] };
  // The map names the source by its path relative to the map, as tools expect.
  map.sources = [relative(dirname(out), file)];
  const name = out.slice(dirname(out).length + 1);
  await writeFile(`${out}.map`, JSON.stringify(map));
  await writeFile(out, `${result.code}//# sourceMappingURL=${name}.map\n`);
}

/** Brings `<root>/.test-build` up to date with the sources; returns how many files were compiled. */
export async function buildTests(root: string): Promise<number> {
  const buildDir = join(root, BUILD_DIR);
  const manifestFile = join(buildDir, 'manifest.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8').catch(() => '{}')) as {
    compiler?: unknown;
    files?: Record<string, string>;
  };
  const built = JSON.stringify(manifest.compiler) === JSON.stringify(COMPILER) ? (manifest.files ?? {}) : {};
  const all = await sources(root);
  const versions = Object.fromEntries(await Promise.all(all.map(async (source) => [source, await version(join(root, source))] as const)));
  const stale = all.filter((source) => built[source] !== versions[source]);
  await mkdir(buildDir, { recursive: true });
  // A few at a time: esbuild's service does the work, this keeps open files bounded.
  for (let i = 0; i < stale.length; i += 64) {
    await Promise.all(stale.slice(i, i + 64).map((source) => compile(root, source, join(buildDir, outputOf(source)))));
  }
  await removeOrphans(buildDir, new Set(all.map((s) => join(buildDir, outputOf(s)))));
  await writeFile(manifestFile, JSON.stringify({ compiler: COMPILER, files: versions }));
  // The product loads its WebAssembly from dist/wasm, built from the .wat sources as `npm run build` does.
  await buildWasm(root, { onlyStale: true });
  // The sandbox launcher too, from its C source, where a compiler is found (live-sandbox.ts falls back without it).
  await buildLauncher(root, { onlyStale: true });
  return stale.length;
}

/** Removes outputs whose source was deleted or renamed, so that nothing can import them. */
async function removeOrphans(buildDir: string, wanted: Set<string>): Promise<void> {
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (!wanted.has(path.replace(/\.map$/, ''))) await rm(path, { force: true });
    }
  }
  for (const root of SOURCE_ROOTS) await walk(join(buildDir, root));
}
