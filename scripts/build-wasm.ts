/**
 * Builds the product's WebAssembly from its text sources with wabt (the WebAssembly Binary
 * Toolkit): main/machine/newline-count.wat into dist/wasm/newline-count.wasm, which the line
 * scanner loads. `npm run build` runs it; the test build (test-build.ts) runs it when the source
 * is newer than what was built.
 *
 *   node --import tsx scripts/build-wasm.ts
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The text sources, relative to the package root; each builds into dist/wasm/<name>.wasm. */
export const WASM_SOURCES = ['main/machine/newline-count.wat'];

/** Where a source's module is built, relative to the package root. */
export function wasmOutput(source: string): string {
  return join('dist', 'wasm', basename(source).replace(/\.wat$/, '.wasm'));
}

/** The module a text source defines, as bytes; no names section, so the same text always gives the same bytes. */
export async function compileWat(file: string, text: string): Promise<Uint8Array> {
  const wabt = await (await import('wabt')).default();
  const module = wabt.parseWat(file, text, { simd: true });
  try {
    module.resolveNames();
    module.validate();
    return module.toBinary({ log: false, write_debug_names: false }).buffer;
  } finally {
    module.destroy();
  }
}

/** Builds the modules under `root`; with `onlyStale`, only those whose source is newer than the built file. Returns how many were built. */
export async function buildWasm(root: string, options: { onlyStale?: boolean } = {}): Promise<number> {
  let built = 0;
  for (const source of WASM_SOURCES) {
    const from = join(root, source);
    const to = join(root, wasmOutput(source));
    if (options.onlyStale && (await isFresh(from, to))) continue;
    const bytes = await compileWat(from, await readFile(from, 'utf8'));
    await mkdir(dirname(to), { recursive: true });
    // Whole or not at all: a reader (or a build running at once) never sees half a module.
    const temp = `${to}.${process.pid}.tmp`;
    await writeFile(temp, bytes);
    await rename(temp, to);
    built += 1;
  }
  return built;
}

async function isFresh(source: string, output: string): Promise<boolean> {
  const [from, to] = await Promise.all([stat(source), stat(output).catch(() => undefined)]);
  return to !== undefined && to.mtimeMs >= from.mtimeMs;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildWasm(fileURLToPath(new URL('..', import.meta.url)));
}
