/**
 * Compiles the host and the desktop app (the files tsconfig.build.json names: main, common,
 * preload, no tests) into dist/, one .js per source at the same path, with a source map each, and
 * the JSON files they import: `npm run build`'s first step. esbuild strips the types without
 * checking them, as the tests' build does (scripts/test-build.ts); `npm run check` and
 * `npm run typecheck` check them. tsc did the same work here with a type check of its own, which
 * cost about 16 s of CPU in every build (CI builds twice: its own and the README's first run).
 *
 *   node --import tsx scripts/build-node.ts
 */
import { build, type BuildOptions } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseTsconfig } from './tsconfig-files.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist');

const sources = parseTsconfig(join(ROOT, 'tsconfig.build.json')).fileNames.filter((file) => !file.endsWith('.d.ts'));

const common: BuildOptions = {
  absWorkingDir: ROOT,
  outdir: OUT,
  outbase: ROOT,
  platform: 'node',
  target: 'node20.19',
  sourcemap: true,
  tsconfig: join(ROOT, 'tsconfig.json'),
  logLevel: 'warning',
};
await Promise.all([
  build({ ...common, entryPoints: sources.filter((file) => /\.m?ts$/.test(file)), format: 'esm' }),
  // A .cts source (Electron's preload) is CommonJS, as tsc emits it: a .cjs beside the others.
  build({ ...common, entryPoints: sources.filter((file) => file.endsWith('.cts')), format: 'cjs', outExtension: { '.js': '.cjs' } }),
]);

// The JSON files the sources import (`with { type: 'json' }`) are read beside the compiled module, as tsc copied them.
const imported = new Set<string>();
for (const file of sources) {
  for (const match of ts.sys.readFile(file)!.matchAll(/from\s+'(\.[^']+\.json)'/g)) imported.add(join(dirname(file), match[1]!));
}
for (const file of imported) {
  const to = join(OUT, relative(ROOT, file));
  await mkdir(dirname(to), { recursive: true });
  await copyFile(file, to);
}
