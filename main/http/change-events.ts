import type { RequestHandler } from 'express';
import { CHANGE_EVENT, type Change } from '../../common/api/events.js';
import { changeKey, type ChangeFeed } from '../events/change-feed.js';

/** A comment line this often keeps idle proxies and the browser from dropping the stream, and finds dead sockets. */
const KEEP_ALIVE_MS = 25_000;

/**
 * `GET /api/events`: the change feed as server-sent events, one `change` event per change (its JSON
 * in `data`), so the page fetches again just what changed instead of asking on a timer. Changes
 * that come in one burst (a write touches several topics, a check starts and ends) are sent once.
 */
export function changeEvents(feed: ChangeFeed): RequestHandler {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    // Sent at once, so the page knows the stream is open (and fetches what it missed while it was not).
    res.write(': open\n\n');
    const due = new Map<string, Change>();
    let scheduled: NodeJS.Immediate | undefined;
    const send = () => {
      scheduled = undefined;
      const text = [...due.values()].map((change) => `event: ${CHANGE_EVENT}\ndata: ${JSON.stringify(change)}\n\n`).join('');
      due.clear();
      res.write(text);
    };
    const stop = feed.subscribe((change) => {
      due.set(changeKey(change), change);
      scheduled ??= setImmediate(send);
    });
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    res.on('close', () => {
      stop();
      clearInterval(keepAlive);
      if (scheduled) clearImmediate(scheduled);
    });
  };
}
