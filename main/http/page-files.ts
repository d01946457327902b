import { extname, sep } from 'node:path';
import express, { type Request, type RequestHandler } from 'express';

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

/**
 * The built page: each text file in its compressed copy when the browser takes one (brotli before
 * gzip), hashed assets cached for good, everything else (the index) checked again on every load,
 * so a new build shows at once. Files without a compressed copy are served as they are.
 */
export function pageFiles(dir: string): RequestHandler {
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
