/**
 * Bundles the host's render of the page's first screen (renderer/server-render.tsx: the page's
 * components, React DOM's server renderer, zod) into dist/server-render/first-screen.js, for Node,
 * with React's production build. The host imports it only when it builds a signed-in owner's index
 * (main/http/first-screen.ts), so it is a file of its own rather than a chunk of the CLI: the CLI's
 * bundle never names it, and its start loads none of it.
 *
 *   node --import tsx scripts/bundle-server-render.ts
 */
import { build, type Plugin } from 'esbuild';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NODE_BUNDLE } from './bundle-cli.js';

/**
 * `react-dom/server` for Node is two renderers, the one to a string and the streaming one; only
 * `renderToString` is used, so only its file is bundled: about 300 KB less to load at the first index.
 */
const RENDER_TO_STRING_ONLY: Plugin = {
  name: 'render-to-string-only',
  setup(bundle) {
    const reactDom = dirname(createRequire(import.meta.url).resolve('react-dom/package.json'));
    bundle.onResolve({ filter: /^react-dom\/server$/ }, () => ({
      path: join(reactDom, 'cjs', 'react-dom-server-legacy.node.production.js'),
    }));
  },
};

const OUT = 'dist/server-render';

/** Bundles the render under `root` into `root`/dist/server-render. */
export async function bundleServerRender(root: string): Promise<void> {
  // Chunk names carry a content hash: the previous build's would pile up.
  await rm(join(root, OUT), { recursive: true, force: true });
  await build({
    ...NODE_BUNDLE,
    absWorkingDir: root,
    entryPoints: { 'first-screen': 'renderer/server-render.tsx' },
    outdir: OUT,
    // The screens the page loads when opened (Skills with its Markdown and YAML, Agent access, Server)
    // stay in chunks of their own, which the first screen's render never loads.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    tsconfig: 'renderer/tsconfig.json',
    // React's production build: its development build checks and warns on every render, at several times the cost.
    define: { 'process.env.NODE_ENV': '"production"' },
    // The page's styles are the browser's: the HTML only names the classes.
    loader: { '.css': 'empty' },
    plugins: [RENDER_TO_STRING_ONLY],
  });
}
