import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The tests run from JavaScript that scripts/test-build.ts compiles into this folder of the
 * repository, one .js file per source file at the same relative path.
 */
export const BUILD_DIR = '.test-build';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The compiled file of a source file (a path or file URL of a `.ts` file in the repository), for a
 * child process to run on plain Node: no loader to start in it, and the same code the test runs.
 */
export function builtPath(source: string | URL): string {
  const path = typeof source === 'string' ? source : fileURLToPath(source);
  return join(ROOT, BUILD_DIR, relative(ROOT, path)).replace(/\.tsx?$/, '.js');
}

/** `builtPath` as a file URL, for an `import()` in code a child process runs. */
export function builtUrl(source: string | URL): string {
  return pathToFileURL(builtPath(source)).href;
}
