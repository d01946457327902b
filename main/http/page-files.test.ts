import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import express from 'express';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { PACKAGE_ROOT } from '../version.js';
import { embed, pageFiles } from './page-files.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A GET (or HEAD) with exactly these headers, the body as it came on the wire (still compressed). */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (chunk: Buffer) => chunks.push(chunk))
        .on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

function decoded(answer: Answer): Buffer {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.body);
  if (encoding === 'gzip') return gunzipSync(answer.body);
  assert.equal(encoding, undefined);
  return answer.body;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const INDEX =
  '<!doctype html><html><head><script type="module" src="./assets/index-AbC123.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('a page script '.repeat(400))});`;
const IMAGE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe("the page's files, as the control plane serves them", () => {
  let dir: string;
  let server: Server;
  let base: string;

  before(async () => {
    // A build as vite.config.ts writes it: text files with .br and .gz copies (the small one has none), an image without.
    dir = await mkdtemp(join(tmpdir(), 'pw-page-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), INDEX);
    await writeFile(join(dir, 'index.html.br'), brotliCompressSync(INDEX));
    await writeFile(join(dir, 'index.html.gz'), gzipSync(INDEX));
    await writeFile(join(dir, 'assets', 'index-AbC123.js'), SCRIPT);
    await writeFile(join(dir, 'assets', 'index-AbC123.js.br'), brotliCompressSync(SCRIPT));
    await writeFile(join(dir, 'assets', 'index-AbC123.js.gz'), gzipSync(SCRIPT));
    await writeFile(join(dir, 'assets', 'tiny-Q1w2E3.css'), 'a{}');
    await writeFile(join(dir, 'assets', 'logo-Z9y8X7.png'), IMAGE);
    const app = express();
    app.use(pageFiles(dir));
    server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends brotli to a browser that takes it, else gzip, else the file itself, each the same content', async () => {
    const cases: Array<[string, string | undefined]> = [
      ['gzip, deflate, br, zstd', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip, deflate', 'gzip'],
      ['deflate', undefined],
      ['br;q=0, gzip;q=0', undefined],
      ['', undefined],
    ];
    for (const path of ['/', '/index.html', '/assets/index-AbC123.js']) {
      for (const [accept, encoding] of cases) {
        const answer = await get(`${base}${path}`, accept ? { 'Accept-Encoding': accept } : {});
        assert.equal(answer.status, 200, `${path} ${accept}`);
        assert.equal(answer.headers['content-encoding'], encoding, `${path} with Accept-Encoding "${accept}"`);
        assert.equal(answer.headers.vary, 'Accept-Encoding', path);
        assert.equal(decoded(answer).toString(), path.endsWith('.js') ? SCRIPT : INDEX, `${path} ${accept}`);
        assert.equal(Number(answer.headers['content-length']), answer.body.length);
        assert.match(
          answer.headers['content-type']!,
          path.endsWith('.js') ? /^text\/javascript; charset=utf-8$/ : /^text\/html; charset=utf-8$/,
        );
        if (encoding) assert.ok(answer.body.length < decoded(answer).length, `${path} ${encoding} is compressed`);
      }
    }
  });

  it('caches hashed assets for good and has the index checked again on every load', async () => {
    for (const accept of ['br', 'gzip', '']) {
      const headers: Record<string, string> = accept ? { 'Accept-Encoding': accept } : {};
      assert.equal((await get(`${base}/`, headers)).headers['cache-control'], 'no-cache');
      assert.equal((await get(`${base}/index.html`, headers)).headers['cache-control'], 'no-cache');
      assert.equal((await get(`${base}/assets/index-AbC123.js`, headers)).headers['cache-control'], IMMUTABLE);
      assert.equal((await get(`${base}/assets/logo-Z9y8X7.png`, headers)).headers['cache-control'], IMMUTABLE);
    }
  });

  it('revalidates the index per encoding: its tag differs by encoding and a match answers 304 with no body', async () => {
    const br = await get(`${base}/`, { 'Accept-Encoding': 'br' });
    const plain = await get(`${base}/`);
    assert.ok(br.headers.etag && plain.headers.etag);
    assert.notEqual(br.headers.etag, plain.headers.etag);
    const again = await get(`${base}/`, { 'Accept-Encoding': 'br', 'If-None-Match': br.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers['cache-control'], 'no-cache');
  });

  it('serves a file without a compressed copy as it is, an image with no Vary, and refuses what is not there', async () => {
    const css = await get(`${base}/assets/tiny-Q1w2E3.css`, { 'Accept-Encoding': 'br, gzip' });
    assert.equal(css.status, 200);
    assert.equal(css.headers['content-encoding'], undefined);
    assert.equal(css.body.toString(), 'a{}');
    const png = await get(`${base}/assets/logo-Z9y8X7.png`, { 'Accept-Encoding': 'br, gzip' });
    assert.deepEqual(png.body, IMAGE);
    assert.equal(png.headers['content-encoding'], undefined);
    assert.equal(png.headers.vary, undefined);
    assert.equal((await get(`${base}/assets/missing-000000.js`, { 'Accept-Encoding': 'br' })).status, 404);
    // The compressed copies are not files of the page in their own right, and nothing outside the folder is reachable.
    assert.equal((await get(`${base}/%2e%2e/${dir.split('/').pop()}/index.html`, { 'Accept-Encoding': 'br' })).status, 404);
    const head = await get(`${base}/assets/index-AbC123.js`, { 'Accept-Encoding': 'br' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'br');
    assert.equal(head.body.length, 0);
  });
});

describe("the index with the first screen's data", () => {
  /** Text that would end the element, open a comment or start a script, were it not escaped. */
  const DATA = { places: [{ label: '</script><script>alert(1)</script><!--', note: 'a & b > c \u2028' }] };
  const ELEMENT = /<script type="application\/json" id="first-screen">([^<]*)<\/script><\/body>/;
  /** The first screen's HTML as React writes it; `$'` and `$&` would bring parts of the index along if it were used as a replacement pattern. */
  const DRAWN = '<div class="frame"><p class="rule">Costs $&amp; more $\' and $` here</p></div>';
  let dir: string;
  let server: Server;
  let base: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-page-'));
    await writeFile(join(dir, 'index.html'), INDEX);
    await writeFile(join(dir, 'index.html.br'), brotliCompressSync(INDEX));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'assets', 'index-AbC123.js'), SCRIPT);
    const app = express();
    // Who asks is in a header here; the control plane looks at the session cookie.
    const firstScreen = (req: express.Request) => {
      const who = req.headers['x-who'];
      if (who === 'owner') return Promise.resolve({ json: JSON.stringify(DATA) });
      if (who === 'drawn') return Promise.resolve({ json: JSON.stringify(DATA), html: DRAWN });
      return who === 'broken' ? Promise.reject(new Error('no data')) : undefined;
    };
    app.use(pageFiles(dir, { firstScreen }));
    server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('carries the data, escaped, in every encoding, never to be stored', async () => {
    for (const path of ['/', '/index.html']) {
      for (const [accept, encoding] of [
        ['gzip, deflate, br', 'br'],
        ['gzip', 'gzip'],
        ['', undefined],
      ] as const) {
        const answer = await get(`${base}${path}`, { 'X-Who': 'owner', ...(accept && { 'Accept-Encoding': accept }) });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-encoding'], encoding, `${path} ${accept}`);
        assert.equal(answer.headers['cache-control'], 'no-store');
        assert.equal(answer.headers.vary, 'Accept-Encoding, Cookie');
        assert.match(answer.headers['content-type']!, /^text\/html; charset=utf-8$/);
        const html = decoded(answer).toString();
        const json = ELEMENT.exec(html)?.[1];
        assert.ok(json, html);
        assert.deepEqual(JSON.parse(json), DATA);
        assert.equal(html.replace(ELEMENT, '</body>'), INDEX);
      }
    }
    const head = await get(`${base}/`, { 'X-Who': 'owner', 'Accept-Encoding': 'br' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    // Assets are the files as built, whoever asks.
    assert.equal((await get(`${base}/assets/index-AbC123.js`, { 'X-Who': 'owner' })).body.toString(), SCRIPT);
  });

  it('puts the first screen, when drawn, in #root as it came, and the data before </body>', async () => {
    const answer = await get(`${base}/`, { 'X-Who': 'drawn', 'Accept-Encoding': 'gzip' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['cache-control'], 'no-store');
    const html = decoded(answer).toString();
    assert.deepEqual(JSON.parse(ELEMENT.exec(html)?.[1] ?? 'null'), DATA);
    assert.equal(
      html.replace(ELEMENT, '</body>'),
      INDEX.replace('<div id="root"></div>', () => `<div id="root">${DRAWN}</div>`),
    );
  });

  it('is the index as built for anyone else, and when the data cannot be had', async () => {
    for (const who of ['someone', 'broken']) {
      const answer = await get(`${base}/`, { 'X-Who': who, 'Accept-Encoding': 'br' });
      assert.equal(answer.status, 200, who);
      assert.equal(answer.headers['cache-control'], 'no-cache', who);
      assert.equal(decoded(answer).toString(), INDEX, who);
    }
  });

  it('escapes every < so that nothing in the data ends the element or opens a comment', () => {
    const html = embed(INDEX, { json: JSON.stringify(DATA) });
    const json = ELEMENT.exec(html)?.[1];
    assert.ok(json && !json.includes('<'), html);
    assert.ok(json.includes('\\u003c/script>\\u003cscript>'), json);
    assert.deepEqual(JSON.parse(json), DATA);
    assert.throws(() => embed('<!doctype html><p>no body end', { json: '{}' }), /no <\/body>/);
    assert.throws(() => embed('<!doctype html><body></body>', { json: '{}', html: DRAWN }), /no <div id="root"><\/div>/);
  });
});

const PAGE_DIR = join(PACKAGE_ROOT, 'dist', 'renderer');

describe(
  "the built page, from a real host's control plane",
  { skip: existsSync(join(PAGE_DIR, 'index.html')) ? false : 'the page is not built (npm run build)' },
  () => {
    let fx: HostFixture;
    let control: string;

    before(async () => {
      fx = await startHost();
      control = await fx.host.open();
    });
    after(() => fx.close());

    it('serves the index and every asset of the build compressed, as the same bytes as the files', async () => {
      const index = await get(`${control}/`, { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
      assert.equal(index.headers['content-encoding'], 'br');
      assert.equal(index.headers['cache-control'], 'no-cache');
      assert.deepEqual(decoded(index), await readFile(join(PAGE_DIR, 'index.html')));
      // The security headers stay on the page.
      assert.match(String(index.headers['content-security-policy']), /default-src 'self'/);
      const assets = (await readdir(join(PAGE_DIR, 'assets'))).filter((name) => /\.(js|css)$/.test(name));
      assert.ok(assets.length > 0);
      for (const name of assets) {
        for (const encoding of ['br', 'gzip']) {
          const answer = await get(`${control}/assets/${name}`, { 'Accept-Encoding': encoding });
          assert.equal(answer.status, 200, name);
          assert.equal(answer.headers['content-encoding'], encoding, name);
          assert.equal(answer.headers['cache-control'], IMMUTABLE, name);
          assert.deepEqual(decoded(answer), await readFile(join(PAGE_DIR, 'assets', name)), name);
        }
      }
    });
  },
);
