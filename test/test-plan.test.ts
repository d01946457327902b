import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  composeBatches,
  describeNode22,
  nodeModules,
  planTests,
  RUNTIME_ALIKE,
  RUNTIME_DIFFERENCES,
  RUNTIME_PROBES,
  specifiers,
} from '../scripts/test-plan.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The product's sources (not its tests), relative to the root. */
async function productSources(): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) found.push(path);
    }
  }
  for (const dir of ['main', 'common', 'preload']) await walk(dir);
  return found;
}

/** A tree of sources in a temporary folder; `plan` plans the test files in it. */
async function tree(
  files: Record<string, string>,
): Promise<{ plan(tests: string[]): ReturnType<typeof planTests>; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'pw-test-plan-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return { plan: (tests) => planTests(dir, tests), close: () => rm(dir, { recursive: true, force: true }) };
}

describe('the test plan: which files run on Node 22 too', () => {
  it('names every Node module the product imports, as a difference between the two Nodes or as alike on both', async () => {
    const named = new Set([...RUNTIME_DIFFERENCES, ...RUNTIME_ALIKE].flatMap((item) => item.modules));
    const unnamed: string[] = [];
    for (const file of await productSources()) {
      for (const name of nodeModules(specifiers(await readFile(join(root, file), 'utf8')))) {
        if (!named.has(name)) unnamed.push(`${file}: node:${name}`);
      }
    }
    assert.deepEqual(unnamed, [], 'say in scripts/test-plan.ts whether each differs between Node 20 and 22');
  });

  it('runs on both the tests whose product code, directly or not, uses what differs, and says what', async () => {
    const t = await tree({
      'main/server.ts': "import { createServer } from 'node:http';\nexport const s = createServer;\n",
      'main/served.ts': "import { s } from './server.js';\nexport const t = s;\n",
      'main/paths.ts':
        "import { join } from 'node:path';\nimport { readFile } from 'node:fs/promises';\nexport const p = [join, readFile];\n",
      'main/hash.ts': "import { createHash, randomBytes } from 'node:crypto';\nexport const h = [createHash, randomBytes];\n",
      'main/keys.ts': "import { createHash, createPublicKey } from 'node:crypto';\nexport const k = [createHash, createPublicKey];\n",
      'main/watch.ts': "import { watch, type FSWatcher } from 'node:fs';\nexport const w: [unknown, FSWatcher?] = [watch];\n",
      'main/watch-by-name.ts': "import fs from 'node:fs';\nexport const w = () => fs.watch('.');\n",
      'main/own-fetch.ts': 'export class A { fetch(u: string) { return u; } go() { return this.fetch("x"); } }\n',
      'main/fetch.ts': 'export const f = () => fetch("http://127.0.0.1/");\n',
      'main/native.ts': "const NAME = 'node-pty';\nexport const n = NAME;\n",
      'main/sdk.ts':
        "import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';\nexport const c = StreamableHTTPClientTransport;\n",
      'test/support/fixture.ts': "export { t } from '../../main/served.js';\n",
      'main/served.test.ts': "import { t } from './served.js';\nvoid t;\n",
      'main/paths.test.ts': "import { p } from './paths.js';\nimport { createServer } from 'node:http';\nvoid [p, createServer];\n",
      'main/hash.test.ts': "import { h } from './hash.js';\nvoid h;\n",
      'main/keys.test.ts': "import { k } from './keys.js';\nvoid k;\n",
      'main/watch.test.ts': "import { w } from './watch.js';\nvoid w;\n",
      'main/watch-by-name.test.ts': "import { w } from './watch-by-name.js';\nvoid w;\n",
      'main/own-fetch.test.ts': "import { A } from './own-fetch.js';\nvoid A;\n",
      'main/fetch.test.ts': "import { f } from './fetch.js';\nvoid f;\n",
      'main/native.test.ts': "import { n } from './native.js';\nvoid n;\n",
      'main/sdk.test.ts': "import { c } from './sdk.js';\nvoid c;\n",
      'test/through-support.test.ts': "import { t } from './support/fixture.js';\nvoid t;\n",
      'e2e/server.test.ts': "import { t } from '../main/served.js';\nvoid t;\n",
    });
    try {
      const plans = await t.plan([
        'main/served.test.ts',
        'main/paths.test.ts',
        'main/hash.test.ts',
        'main/keys.test.ts',
        'main/watch.test.ts',
        'main/watch-by-name.test.ts',
        'main/own-fetch.test.ts',
        'main/fetch.test.ts',
        'main/native.test.ts',
        'main/sdk.test.ts',
        'test/through-support.test.ts',
        'e2e/server.test.ts',
      ]);
      const uses = Object.fromEntries(plans.map((plan) => [plan.file, plan.onNode22 ? plan.runtimeUses : 'once']));
      assert.deepEqual(uses, {
        'main/served.test.ts': ['HTTP', 'stream buffering'],
        // What the test itself imports is not the product's: a test's HTTP client is not under test.
        'main/paths.test.ts': 'once',
        'main/hash.test.ts': 'once',
        'main/keys.test.ts': ['OpenSSL'],
        'main/watch.test.ts': ['file watching'],
        'main/watch-by-name.test.ts': ['file watching'],
        'main/own-fetch.test.ts': 'once',
        'main/fetch.test.ts': ['fetch and web streams'],
        'main/native.test.ts': ['native modules'],
        'main/sdk.test.ts': ['fetch and web streams'],
        'test/through-support.test.ts': ['HTTP', 'stream buffering'],
        'e2e/server.test.ts': 'once',
      });
    } finally {
      await t.close();
    }
  });

  it("says for each difference how many files it puts on Node 22, why, and the part's version on each Node", () => {
    const plan = (file: string, runtimeUses: string[]) => ({
      file,
      needsBuild: false,
      onNode22: runtimeUses.length > 0,
      runtimeUses,
      usesChromium: false,
      ownProcess: undefined,
    });
    const values = new Map(RUNTIME_PROBES.map((probe, i) => [probe, [`twenty-${i}`, `twenty-two-${i}`] as [string, string]]));
    const text = describeNode22(
      [
        plan('main/a.test.ts', ['HTTP', 'OpenSSL']),
        plan('main/b.test.ts', ['HTTP']),
        plan('main/c.test.ts', []),
        plan('e2e/d.test.ts', []),
      ],
      values,
    );
    const http = RUNTIME_DIFFERENCES.find((d) => d.name === 'HTTP')!;
    const [twenty, twentyTwo] = values.get(http.probe)!;
    assert.ok(text.includes(`the 2 files whose product code`), text);
    assert.ok(text.includes(`  2 HTTP (${twenty} | ${twentyTwo}): ${http.reason}.`), text);
    assert.ok(text.includes('  1 OpenSSL ('), text);
    assert.ok(text.includes('  0 native modules ('), text);
    assert.ok(text.includes('Once: 1 files of plain logic or of what both do alike, and the 1 e2e files.'), text);
  });
});

describe('the test plan: which files share a process', () => {
  it('runs alone the e2e files, those with hooks at their top level (node:test would apply them to every later file of a batch) and those that measure the whole process', async () => {
    const t = await tree({
      'main/plain.test.ts':
        "import { describe, it, before } from 'node:test';\ndescribe('a', () => {\n  before(() => {});\n  it('b', () => {});\n});\n",
      'main/hooked.test.ts': "import { after, it } from 'node:test';\nafter(() => {});\nit('b', () => {});\n",
      'main/each.test.ts': "import { beforeEach, it } from 'node:test';\nbeforeEach(() => {});\nit('b', () => {});\n",
      'e2e/cli.test.ts': "import { it } from 'node:test';\nit('b', () => {});\n",
      // Split, so that this file is not itself taken for one that measures the process.
      'main/descriptors.test.ts': `import { readdir } from 'node:fs/promises';\nconst open = () => readdir('/proc/self/${'fd'}');\n`,
      'main/memory.test.ts': `const peak = () => process.resourceUsage().max${'RSS'};\n`,
    });
    try {
      const plans = await t.plan([
        'main/plain.test.ts',
        'main/hooked.test.ts',
        'main/each.test.ts',
        'e2e/cli.test.ts',
        'main/descriptors.test.ts',
        'main/memory.test.ts',
      ]);
      assert.deepEqual(
        plans.map((plan) => [plan.file, plan.ownProcess !== undefined]),
        [
          ['main/plain.test.ts', false],
          ['main/hooked.test.ts', true],
          ['main/each.test.ts', true],
          ['e2e/cli.test.ts', true],
          ['main/descriptors.test.ts', true],
          ['main/memory.test.ts', true],
        ],
      );
    } finally {
      await t.close();
    }
  });

  it('splits files into batches of about equal expected time, the longest files in different batches', () => {
    const files = [40, 30, 20, 10, 10, 5, 5, 5, 5, 5, 3, 2].map((s, i) => ({ file: `f${i}`, estimateMs: s * 1000 }));
    const batches = composeBatches(files, 3);
    assert.equal(batches.length, 3);
    assert.deepEqual(
      batches
        .flat()
        .map((f) => f.file)
        .sort(),
      files.map((f) => f.file).sort(),
    );
    const times = batches.map((batch) => batch.reduce((sum, f) => sum + f.estimateMs, 0) / 1000);
    assert.deepEqual(times, [48, 47, 45]);
    assert.deepEqual(
      batches.map((batch) => batch[0]!.file),
      ['f0', 'f1', 'f2'],
    );
    assert.deepEqual(composeBatches(files.slice(0, 1), 3), [files.slice(0, 1)]);
    assert.deepEqual(composeBatches([], 3), []);
  });
});
