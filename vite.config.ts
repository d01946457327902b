import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const OUT_DIR = new URL('./dist/renderer', import.meta.url).pathname;

// The page: built into dist/renderer, which the control plane serves at `/` (and the desktop window
// loads). Relative asset paths, no inline scripts (the CSP allows scripts from 'self' only).
export default defineConfig({
  root: new URL('./renderer', import.meta.url).pathname,
  base: './',
  plugins: [react(), precompress()],
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rolldownOptions: {
      output: {
        // zod with the page's setting of it (renderer/app/no-eval.ts), in a chunk of their own: the
        // setting then runs before any module that makes a schema, whichever chunk that lands in.
        codeSplitting: { groups: [{ name: 'zod', test: /\/node_modules\/zod\/|\/renderer\/app\/no-eval\.ts$/ }] },
      },
    },
  },
});

/** Files of these kinds are served compressed (main/http/page-files.ts). */
const COMPRESSIBLE = /\.(html|js|css|svg|json|txt)$/;

/**
 * Writes `<file>.br` and `<file>.gz` beside each text file of the build, compressed once at the
 * highest levels, so that the control plane serves them without compressing on each request.
 */
function precompress(): Plugin {
  return {
    name: 'precompress',
    apply: 'build',
    async closeBundle() {
      const files = (await readdir(OUT_DIR, { recursive: true })).filter((name) => COMPRESSIBLE.test(name));
      await Promise.all(
        files.map(async (name) => {
          const path = join(OUT_DIR, name);
          const data = await readFile(path);
          const br = await promisify(brotliCompress)(data, {
            params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
          });
          const gz = await promisify(gzip)(data, { level: constants.Z_BEST_COMPRESSION });
          // Only where it saves something: without a variant, the file is served as it is.
          await Promise.all([
            br.length < data.length && writeFile(`${path}.br`, br),
            gz.length < data.length && writeFile(`${path}.gz`, gz),
          ]);
        }),
      );
    },
  };
}
