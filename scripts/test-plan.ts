/**
 * What each test file needs, read from the sources and the files they import (no list to keep):
 * - whether it needs the build (`dist/`: the bundled CLI, the page's files), so it waits for it;
 * - whether it runs on Node 22 too. The desktop app runs the host on Node 22 (Electron 45), the CLI
 *   on the user's Node (20 or 22). A unit or integration test runs on both when the product code it
 *   reaches (the product modules it imports, directly or not) uses one of `RUNTIME_DIFFERENCES`:
 *   what the two Nodes do differently under this code. What both do alike (`RUNTIME_ALIKE`) and
 *   plain logic run once. The e2e tests (a browser, the spawned CLI) run on the system's Node only;
 * - whether it drives Chromium (through test/support/chromium.ts), so that the run can share one;
 * - whether it needs a process of its own (`ownProcess`): the whole run puts the others in batches,
 *   several files in one process one after the other (scripts/test-batch.ts).
 */
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, join, normalize } from 'node:path';

/** A product source file, as the differences look at it. */
export interface Source {
  text: string;
  /** The module specifiers it imports. */
  specifiers: string[];
  /** What it takes from Node's module `name` (`'fs'`): named imports, and `alias.x` of a default or namespace import. */
  takes(name: string): Set<string>;
}

/** Something the two Nodes do differently under this product's code. */
export interface RuntimeDifference {
  name: string;
  /** Why a test of code that uses it must run on both. */
  reason: string;
  /** A Node expression whose value on each Node shows the part that differs (the run prints both). */
  probe: string;
  /** Node's modules whose import alone means a use (`'http'`: `node:http` or `http`). */
  modules: string[];
  /** Other uses, seen in a product source. */
  alsoUsed?(source: Source): boolean;
}

/** Node's crypto calls whose answers rest on the OpenSSL build (keys, signatures, ciphers), not only on a fixed algorithm. */
const OPENSSL_CALLS = new Set([
  'KeyObject',
  'createPublicKey',
  'createPrivateKey',
  'createSecretKey',
  'generateKeyPair',
  'generateKeyPairSync',
  'createCipheriv',
  'createDecipheriv',
  'createSign',
  'createVerify',
  'sign',
  'verify',
  'webcrypto',
  'subtle',
]);
/** The runtime's fetch and web platform classes, called or built by name (not a method: `x.fetch(`, `fetch(a: A): B {`). */
const WEB_PLATFORM =
  /(?<![\w.])fetch\((?![^)]*\)\s*[:{])|\bnew (?:Request|Response|Headers|FormData)\(|\b(?:Readable|Writable|Transform)Stream\b|\bTextDecoderStream\b/;
/** Packages that run on the runtime's fetch, web streams or WebAssembly: the MCP SDK's HTTP transports, undici's own client. */
const WEB_PLATFORM_PACKAGES =
  /^(?:undici|eventsource-parser\/stream|@modelcontextprotocol\/sdk\/(?:client\/(?:streamableHttp|sse|auth)|server\/streamableHttp)\.js)$/;

export const RUNTIME_DIFFERENCES: RuntimeDifference[] = [
  {
    name: 'native modules',
    reason: 'keytar and node-pty are compiled add-ons, which each Node loads through its own ABI',
    probe: '`ABI ${process.versions.modules}, N-API ${process.versions.napi}`',
    modules: [],
    alsoUsed: (s) => /['"](?:keytar|node-pty)['"]/.test(s.text),
  },
  {
    name: 'WebAssembly',
    reason: "the line scanner's WebAssembly is compiled and run by each Node's V8",
    probe: '`V8 ${process.versions.v8}`',
    modules: [],
    alsoUsed: (s) => /\bWebAssembly\./.test(s.text),
  },
  {
    name: 'fetch and web streams',
    reason:
      "the built-in fetch is each Node's own undici; the MCP SDK's HTTP transports and the undici package build on its Request, Response and web streams",
    probe: '`undici ${process.versions.undici}`',
    modules: ['stream/web'],
    alsoUsed: (s) => WEB_PLATFORM.test(s.text) || s.specifiers.some((spec) => WEB_PLATFORM_PACKAGES.test(spec)),
  },
  {
    name: 'HTTP',
    reason:
      "node:http's parser and its server's defaults (timeouts, keep-alive, closing connections) come with each Node; express runs on it",
    probe: '`llhttp ${process.versions.llhttp}`',
    modules: ['http', 'https', 'http2'],
    alsoUsed: (s) => s.specifiers.includes('express'),
  },
  {
    name: 'stream buffering',
    reason: "Node 22 raised streams' default highWaterMark: the chunks and backpressure of pipes, sockets and bodies differ",
    probe: "`highWaterMark ${require('node:stream').getDefaultHighWaterMark(false)}`",
    modules: ['stream', 'stream/promises', 'child_process', 'net', 'tls', 'http', 'https'],
  },
  {
    name: 'child processes and signals',
    reason: "each Node's libuv spawns, signals and reaps the commands, local servers and the sandbox's launcher",
    probe: '`libuv ${process.versions.uv}`',
    modules: ['child_process'],
    alsoUsed: (s) => /\bprocess\.kill\(/.test(s.text),
  },
  {
    name: 'sockets and name lookup',
    reason: "connections and lookups (the network guard pins addresses through net's lookup hook) are each Node's net, dns and libuv",
    probe: '`libuv ${process.versions.uv}`',
    modules: ['net', 'dns', 'dns/promises', 'tls', 'dgram'],
  },
  {
    name: 'file watching',
    reason: "fs.watch is each Node's watcher (libuv's inotify, Node's own recursive walk)",
    probe: '`libuv ${process.versions.uv}`',
    modules: [],
    alsoUsed: (s) => ['fs', 'fs/promises'].some((name) => ['watch', 'watchFile'].some((call) => s.takes(name).has(call))),
  },
  {
    name: 'OpenSSL',
    reason: "TLS, keys, signatures, ciphers and Web Crypto (jose) are each Node's OpenSSL",
    probe: '`OpenSSL ${process.versions.openssl}`',
    modules: ['tls', 'https'],
    alsoUsed: (s) =>
      s.specifiers.includes('jose') || [...s.takes('crypto')].some((call) => OPENSSL_CALLS.has(call)) || /\bcrypto\.subtle\b/.test(s.text),
  },
];

/**
 * What the product uses of Node that both do alike, which alone puts no file on Node 22 (the run
 * prints each probe's value on both Nodes). Every Node module the product imports is named here or
 * in `RUNTIME_DIFFERENCES` (test/test-plan.test.ts checks it).
 */
export const RUNTIME_ALIKE: Array<{
  name: string;
  modules: string[];
  probe?: string;
}> = [
  {
    name: "Node's JavaScript library",
    modules: [
      'path',
      'url',
      'util',
      'events',
      'timers',
      'timers/promises',
      'buffer',
      'string_decoder',
      'querystring',
      'assert',
      'assert/strict',
      'readline',
      'readline/promises',
      'async_hooks',
      'perf_hooks',
    ],
  },
  // strace shows the same system calls from libuv's thread pool on both (Node 22's libuv uses io_uring in its event loop only).
  {
    name: 'file calls (open, read, write, rename, fsync, stat, statfs)',
    modules: ['fs', 'fs/promises'],
    probe: '`libuv ${process.versions.uv}`',
  },
  {
    name: 'hashes, HMACs, random bytes and UUIDs',
    modules: ['crypto'],
    probe: '`OpenSSL ${process.versions.openssl}`',
  },
  {
    name: 'compression',
    modules: ['zlib'],
    probe: '`zlib ${process.versions.zlib}, brotli ${process.versions.brotli}`',
  },
  { name: "the machine's answers (os)", modules: ['os'] },
  {
    name: "Intl's collation and numbers in English",
    modules: [],
    probe: '`ICU ${process.versions.icu}`',
  },
];

/** A path into this repository's build output, as a string in code: `'dist'`, `'../dist/main/cli.js'`. */
const BUILD_PATH = /['"`](\.\.\/)*dist['"`/]/;
const PRODUCT = /^(main|common|preload)\//;
/**
 * Hooks declared at a file's top level, outside any describe: node:test gives them to the process's
 * root, so in a batch they would run around the later files' tests too, and an `after` only when
 * the process ends.
 */
const TOP_LEVEL_HOOK = /^(?:before|after|beforeEach|afterEach)\(/m;
/**
 * Measures of the whole process: its open descriptors, its I/O counters, its memory. In a batch,
 * what the files before left closing (sockets, children's pipes) or the peak one of them reached
 * would count as this file's.
 */
const PROCESS_MEASURE = /\/proc\/self\/(?:fd|io)\b|\bmaxRSS\b|\bmemoryUsage\(/;
/** What a test that drives a browser imports it from. */
const CHROMIUM_SUPPORT = 'test/support/chromium.ts';

export interface TestPlan {
  file: string;
  needsBuild: boolean;
  onNode22: boolean;
  /** The names of the `RUNTIME_DIFFERENCES` its product code uses. */
  runtimeUses: string[];
  usesChromium: boolean;
  /** Why it cannot share a process with other test files, if it cannot. */
  ownProcess: string | undefined;
}

/** The relative and bare module specifiers a source imports (static, side-effect and literal dynamic imports). */
export function specifiers(source: string): string[] {
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1/gm)].map((m) => m[2]!);
}

/** Node's own modules among `specs`, without `node:` (`'fs/promises'`). */
export function nodeModules(specs: string[]): Set<string> {
  return new Set(specs.flatMap((spec) => (spec.startsWith('node:') ? [spec.slice(5)] : isBuiltin(spec) ? [spec] : [])));
}

export function source(text: string): Source {
  const specs = specifiers(text);
  const nodeModule = (name: string) => `['"](?:node:)?${name.replace('/', '\\/')}['"]`;
  return {
    text,
    specifiers: specs,
    takes: (name) => {
      const found = new Set<string>();
      // import { a, b as c, type D } from 'node:x'  (not `import type { ... }`)
      for (const [, list] of text.matchAll(new RegExp(`import\\s+\\{([^}]*)\\}\\s*from\\s*${nodeModule(name)}`, 'g')))
        for (const item of list!.split(','))
          if (!/^\s*type\s/.test(item) && item.trim())
            found.add(
              item
                .trim()
                .split(/\s+as\s+/)[0]!
                .trim(),
            );
      // import x from 'node:x' / import * as x from 'node:x', then x.call
      for (const [, alias] of text.matchAll(new RegExp(`import\\s+(?:\\*\\s+as\\s+)?(\\w+)\\s+from\\s*${nodeModule(name)}`, 'g')))
        for (const [, call] of text.matchAll(new RegExp(`\\b${alias}\\.(\\w+)`, 'g'))) found.add(call!);
      return found;
    },
  };
}

/** Plans each test file (paths relative to `root`). */
export async function planTests(root: string, files: string[]): Promise<TestPlan[]> {
  const texts = new Map<string, string | undefined>();
  const read = async (file: string): Promise<string | undefined> => {
    if (!texts.has(file)) texts.set(file, await readFile(join(root, file), 'utf8').catch(() => undefined));
    return texts.get(file);
  };
  /** The differences each product file uses, found once however many tests reach it. */
  const uses = new Map<string, string[]>();
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
        if (!uses.has(next)) {
          const product = source(text);
          const modules = nodeModules(product.specifiers);
          uses.set(
            next,
            RUNTIME_DIFFERENCES.filter((d) => d.modules.some((m) => modules.has(m)) || d.alsoUsed?.(product)).map((d) => d.name),
          );
        }
        for (const name of uses.get(next)!) runtimeUses.add(name);
      } else {
        // The product finds its own files wherever it is installed; a test names the build's.
        needsBuild ||= BUILD_PATH.test(text);
      }
      queue.push(...(await imports(next, text)));
    }
    const text = await read(file);
    plans.push({
      file,
      ownProcess: file.startsWith('e2e/')
        ? 'an e2e file runs alone, as the product runs for a user'
        : text !== undefined && TOP_LEVEL_HOOK.test(text)
          ? 'it declares hooks at its top level, which would apply to the files after it in a batch'
          : text !== undefined && PROCESS_MEASURE.test(text)
            ? "it measures the whole process (descriptors, I/O, memory), which other files' leftovers would change"
            : undefined,
      needsBuild,
      onNode22: runtimeUses.size > 0 && !file.startsWith('e2e/'),
      runtimeUses: RUNTIME_DIFFERENCES.map((difference) => difference.name).filter((name) => runtimeUses.has(name)),
      usesChromium: seen.has(CHROMIUM_SUPPORT),
    });
  }
  return plans;
}

/**
 * What the whole run says of its Node 22 pass: each difference with its probe's values on the two
 * Nodes (`values`: by probe, [Node 20's, Node 22's]), how many files it puts there and why; what
 * both do alike; and what runs once.
 */
export function describeNode22(plans: TestPlan[], values: Map<string, [string, string]>): string {
  const both = (probe: string | undefined) => {
    const pair = probe === undefined ? undefined : values.get(probe);
    return pair ? ` (${pair[0]} | ${pair[1]})` : '';
  };
  const on = plans.filter((plan) => plan.onNode22);
  const e2e = plans.filter((plan) => plan.file.startsWith('e2e/')).length;
  return [
    `Also on Node 22, the desktop app's Node: the ${on.length} files whose product code uses what the two Nodes do differently (system Node | Node 22):`,
    ...RUNTIME_DIFFERENCES.map(
      (d) =>
        `  ${String(on.filter((plan) => plan.runtimeUses.includes(d.name)).length).padStart(3)} ${d.name}${both(d.probe)}: ${d.reason}.`,
    ),
    `Alike on both, no reason by itself: ${RUNTIME_ALIKE.map((alike) => `${alike.name}${both(alike.probe)}`).join('; ')}.`,
    `Once: ${plans.length - on.length - e2e} files of plain logic or of what both do alike, and the ${e2e} e2e files.`,
  ].join('\n');
}

/**
 * Splits files into `count` batches (fewer if there are fewer files) of about equal expected time:
 * each file, the longest first, into the batch with the least time so far. The long files (long
 * waits, heavy children) so land in different batches, and one batch never holds them all while
 * the others end early.
 */
export function composeBatches<T extends { estimateMs: number }>(files: T[], count: number): T[][] {
  const batches = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [] as T[], ms: 0 }));
  for (const file of [...files].sort((a, b) => b.estimateMs - a.estimateMs)) {
    const lightest = batches.reduce((least, batch) => (batch.ms < least.ms ? batch : least));
    lightest.files.push(file);
    lightest.ms += file.estimateMs;
  }
  return batches.map((batch) => batch.files);
}

/** Every probe, to be asked of each Node. */
export const RUNTIME_PROBES = [...new Set([...RUNTIME_DIFFERENCES, ...RUNTIME_ALIKE].flatMap((item) => (item.probe ? [item.probe] : [])))];
