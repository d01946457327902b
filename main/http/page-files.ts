import { readFile } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { FIRST_SCREEN_ID } from '../../common/api/first-screen.js';

/** Vite names the files under assets/ by their content's hash: a name never gets other content. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The kinds of files the build writes compressed copies of (`.br`, `.gz`; vite.config.ts). */
const TEXT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const SUFFIX = { br: '.br', gzip: '.gz' } as const;

/** What the index carries for one request: the first screen's data (JSON), and its HTML when it was drawn. */
export interface IndexContent {
  json: string;
  html?: string;
}

export interface PageFilesOptions {
  /**
   * The first screen for this request, carried by the index so the page needs no API round trip
   * to draw it, nor a script to paint it; undefined: the index as built (nobody is signed in).
   */
  firstScreen?: (req: Request) => Promise<IndexContent> | undefined;
}

/**
 * The built page: each text file in its compressed copy when the browser takes one (brotli before
 * gzip), hashed assets cached for good, everything else (the index) checked again on every load,
 * so a new build shows at once. Files without a compressed copy are served as they are. The
 * signed-in owner's index carries the first screen (`firstScreen`) and is never stored.
 */
export function pageFiles(dir: string, options: PageFilesOptions = {}): RequestHandler {
  const assets = `${dir}${sep}assets${sep}`;
  const plain = express.static(dir, {
    index: 'index.html',
    cacheControl: false,
    setHeaders: (res, path) => res.setHeader('Cache-Control', path.startsWith(assets) ? IMMUTABLE : 'no-cache'),
  });
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    let name: string;
    try {
      name = decodeURIComponent(req.path);
    } catch {
      return plain(req, res, next);
    }
    if (name.endsWith('/')) name += 'index.html';
    const data = name === '/index.html' ? options.firstScreen?.(req) : undefined;
    if (data) return void indexWith(dir, data, req, res, () => plain(req, res, next)).catch(next);
    const type = TEXT_TYPES[extname(name)];
    if (!type) return plain(req, res, next);
    // Whichever copy goes out, caches must keep them apart.
    res.vary('Accept-Encoding');
    const encoding = encodingFor(req);
    if (!encoding) return plain(req, res, next);
    const headers = {
      'Content-Type': type,
      'Content-Encoding': encoding,
      'Cache-Control': name.startsWith('/assets/') ? IMMUTABLE : 'no-cache',
    };
    res.sendFile(name + SUFFIX[encoding], { root: dir, cacheControl: false, headers }, (error) => {
      // No compressed copy of this file: the file itself (or the 404).
      if (error && !res.headersSent) plain(req, res, next);
    });
  };
}

/**
 * The index with the first screen in it: made for this request and this person, so never stored.
 * If the data cannot be had, the index as built: the page then asks the API, which says why.
 */
async function indexWith(dir: string, content: Promise<IndexContent>, req: Request, res: Response, asBuilt: NextFunction): Promise<void> {
  let html: string;
  try {
    const [file, value] = await Promise.all([readFile(join(dir, 'index.html'), 'utf8'), content]);
    html = embed(file, value);
  } catch {
    return asBuilt();
  }
  const encoding = encodingFor(req);
  res.vary('Accept-Encoding').vary('Cookie');
  res.set({ 'Content-Type': TEXT_TYPES['.html']!, 'Cache-Control': 'no-store' });
  if (!encoding) {
    res.send(html);
    return;
  }
  // Made anew each time: a fast level, not the build's best.
  const body = await (encoding === 'br'
    ? promisify(brotliCompress)(html, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })
    : promisify(gzip)(html, { level: 6 }));
  res.set('Content-Encoding', encoding).send(body);
}

const ROOT_ELEMENT = '<div id="root"></div>';

/**
 * The first screen's HTML in the page's `#root` (React escaped what it drew from the data), and its
 * JSON in a `<script type="application/json">` before `</body>`. Every `<` of the JSON is written as
 * `\u003c` (the same string to JSON.parse), so no text in it can end the element or open a comment.
 */
export function embed(index: string, { json, html }: IndexContent): string {
  const at = index.lastIndexOf('</body>');
  if (at < 0) throw new Error('The index has no </body>.');
  const data = `<script type="application/json" id="${FIRST_SCREEN_ID}">${json.replace(/</g, '\\u003c')}</script>`;
  if (html === undefined) return `${index.slice(0, at)}${data}${index.slice(at)}`;
  const root = index.indexOf(ROOT_ELEMENT);
  if (root < 0 || root > at) throw new Error(`The index has no ${ROOT_ELEMENT}.`);
  // Put together by position: the HTML is text of the data's, never a pattern.
  const rest = root + ROOT_ELEMENT.length;
  return `${index.slice(0, root)}<div id="root">${html}</div>${index.slice(rest, at)}${data}${index.slice(at)}`;
}

/**
 * The compression the request takes, if any: the higher weight of brotli and gzip, brotli on a tie
 * (browsers list gzip first with the same weight, and brotli is the smaller). A request that names
 * none, or weighs both at 0, gets the file as it is.
 */
function encodingFor(req: Request): keyof typeof SUFFIX | undefined {
  const weights = weightsOf(req.headers['accept-encoding'] ?? '');
  const br = weights.get('br') ?? weights.get('*') ?? 0;
  const gzip = weights.get('gzip') ?? weights.get('*') ?? 0;
  if (br > 0 && br >= gzip) return 'br';
  return gzip > 0 ? 'gzip' : undefined;
}

/** `Accept-Encoding` as coding → weight (`q`, 1 when absent); an entry that does not parse counts as absent. */
function weightsOf(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of header.split(',')) {
    const match = /^\s*([\w*-]+)\s*(?:;\s*q\s*=\s*([01](?:\.\d{0,3})?))?\s*$/i.exec(entry);
    if (match) weights.set(match[1]!.toLowerCase(), match[2] === undefined ? 1 : Number(match[2]));
  }
  return weights;
}
