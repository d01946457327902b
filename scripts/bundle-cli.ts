/**
 * Bundles the headless CLI (main/cli.ts) into dist/main/cli.js, with the modules it loads only on
 * demand (`import()`: each command, the page, the sign-in routes, undici) split into
 * dist/main/chunks/. Loading ~400 separate files cost more than half of the time from spawn to the
 * first answered request; one file, and chunks loaded when needed, does not. The desktop app keeps
 * tsc's separate files (dist/main/electron/main.js).
 *
 * The native modules stay outside the bundle: they are optional and loaded by name at runtime.
 *
 *   node --import tsx scripts/bundle-cli.ts [--metafile FILE]
 */
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** How a Node program is bundled here (bench/startup.ts bundles its baseline the same way). */
export const NODE_BUNDLE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['keytar', 'node-pty', 'electron'],
  // A package's ES module build where it has one: a UMD build (jsonc-parser's "main") require()s its
  // own files by names computed at runtime, which the bundle does not carry.
  mainFields: ['module', 'main'],
  // Bundled CommonJS packages (express, ...) call require() for Node's own modules, which an ES
  // module does not have.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  // Less to parse at every start; names are kept, so stack traces and error names read as in the source.
  minifyWhitespace: true,
  minifySyntax: true,
  keepNames: true,
  logLevel: 'warning',
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The MCP SDK's server code imports zod 3 and a zod 3 to JSON Schema converter, for tools and
 * prompts defined with zod 3 schemas (`server/zod-compat.js`, `server/zod-json-schema-compat.js`).
 * Every schema here is zod 4, so those imports get a module that says so if it is ever called,
 * instead of 115 KB that the server would compile at every start.
 */
const NO_ZOD_3: Plugin = {
  name: 'no-zod-3',
  setup(bundle) {
    bundle.onResolve({ filter: /^(zod\/v3|zod-to-json-schema)$/ }, ({ path, importer }) =>
      importer.includes('/node_modules/@modelcontextprotocol/sdk/') ? { path, namespace: 'no-zod-3' } : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'no-zod-3' }, ({ path }) => ({
      contents: `const absent = () => { throw new Error('${path} is not bundled: every schema of this program is zod 4.'); };\nexport { absent as object, absent as zodToJsonSchema };\n`,
      loader: 'js',
    }));
  },
};

/**
 * The guarded fetch (main/network/guarded-fetch.ts) uses three parts of undici: its Agent (sockets
 * pinned to checked addresses), the request API on it (the gateway's POSTs) and fetch (the MCP SDK's
 * transports). Its index loads every other part too (mock agents, caches, WebSocket, proxies,
 * interceptors): the module here gives the program the same three from undici's own files, and
 * the first upstream a host reaches compiles about 300 KB less. A file undici moves fails the build.
 */
const UNDICI_PARTS: Plugin = {
  name: 'undici-parts',
  setup(bundle) {
    bundle.onResolve({ filter: /^undici$/ }, ({ importer, resolveDir }) =>
      importer.endsWith('/main/network/guarded-fetch.ts')
        ? { path: 'undici', namespace: 'undici-parts', pluginData: resolveDir }
        : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'undici-parts' }, ({ pluginData }) => ({
      contents: [
        "import Agent from 'undici/lib/dispatcher/agent.js';",
        "import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';",
        "import request from 'undici/lib/api/api-request.js';",
        "import { fetch } from 'undici/lib/web/fetch/index.js';",
        // What undici's index does for the request API (with the others, unused here).
        'Dispatcher.prototype.request = request;',
        'export default { Agent, fetch };',
      ].join('\n'),
      loader: 'js',
      resolveDir: pluginData as string,
    }));
  },
};

/** The CLI's bundle into `outdir` (cli.js and chunks/); e2e/cli-loads.test.ts builds it elsewhere to see what each command loads. */
export function cliBundle(outdir: string): BuildOptions {
  return {
    ...NODE_BUNDLE,
    absWorkingDir: ROOT,
    entryPoints: ['main/cli.ts'],
    outdir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [NO_ZOD_3, UNDICI_PARTS],
  };
}

export async function bundleCli(metafile?: string): Promise<void> {
  const outdir = `${ROOT}dist/main`;
  // Chunk names carry a content hash: the previous build's would pile up.
  await rm(`${outdir}/chunks`, { recursive: true, force: true });
  const result = await build({ ...cliBundle(outdir), metafile: metafile !== undefined });
  if (metafile !== undefined) await writeFile(metafile, JSON.stringify(result.metafile));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--metafile');
  await bundleCli(at === -1 ? undefined : process.argv[at + 1]);
}
