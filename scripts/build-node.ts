/**
 * Compiles the host and the desktop app (the files tsconfig.build.json names: main, common,
 * preload, no tests) into dist/, one .js per source at the same path, and the JSON files they
 * import: the first step of `npm run build` (scripts/build.ts). esbuild strips the types without
 * checking them, as the tests' build does (scripts/test-build.ts); `npm run check` and
 * `npm run typecheck` check them. A source map beside each file, for a debugger of the desktop app.
 */
import { build, type BuildOptions } from 'esbuild';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { parseTsconfig } from './tsconfig-files.js';

/** Compiles the sources under `root` into `root`/dist. */
export async function buildNode(root: string): Promise<void> {
  const out = join(root, 'dist');
  const sources = parseTsconfig(join(root, 'tsconfig.build.json')).fileNames.filter((file) => !file.endsWith('.d.ts'));
  const common: BuildOptions = {
    absWorkingDir: root,
    outdir: out,
    outbase: root,
    platform: 'node',
    target: 'node20.19',
    sourcemap: true,
    tsconfig: join(root, 'tsconfig.json'),
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
    for (const match of (await readFile(file, 'utf8')).matchAll(/from\s+'(\.[^']+\.json)'/g)) imported.add(join(dirname(file), match[1]!));
  }
  for (const file of imported) {
    const to = join(out, relative(root, file));
    await mkdir(dirname(to), { recursive: true });
    await copyFile(file, to);
  }
}
