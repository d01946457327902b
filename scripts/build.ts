/**
 * `npm run build`: everything in dist/, in one process. Each part used to be a process of its own,
 * and each paid for tsx's loader (about 0.7 s of CPU) or vite's; the build runs twice in CI (its
 * own and the README's first run on a bare copy).
 *
 *   build-node.ts            the host and the desktop app, one .js per source
 *   bundle-cli.ts            the CLI as one file and chunks (after build-node: it replaces that main/cli.js)
 *   build-wasm.ts            the WebAssembly, from its text source
 *   build-launcher.ts        the sandbox launcher, from its C source, where a C compiler is found
 *   bundle-server-render.ts  the host's render of the page's first screen
 *   vite.config.ts           the page
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as buildPage } from 'vite';
import { buildLauncher } from './build-launcher.js';
import { buildNode } from './build-node.js';
import { buildWasm } from './build-wasm.js';
import { bundleCli } from './bundle-cli.js';
import { bundleServerRender } from './bundle-server-render.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

await Promise.all([
  buildNode(ROOT).then(() => bundleCli()),
  buildWasm(ROOT),
  buildLauncher(ROOT).then((said) => process.stdout.write(`${said}\n`)),
  bundleServerRender(ROOT),
  buildPage({ configFile: join(ROOT, 'vite.config.ts') }),
]);
