#!/usr/bin/env node
// A browser for clients that open the sign-in URL themselves (through xdg-open and $BROWSER),
// on a machine with no desktop: it loads the URL, follows HTTP redirects and <meta refresh>
// reloads as a browser does, and stops at the first page that neither redirects nor reloads
// (the client's loopback callback, usually). Each URL it loads is appended to $STAND_IN_BROWSER_LOG.
import { appendFileSync } from 'node:fs';

const LIMIT_MS = 5 * 60_000;
const log = process.env.STAND_IN_BROWSER_LOG;
const note = (line) => {
  if (log) appendFileSync(log, `${line}\n`);
};

async function browse(start) {
  const deadline = Date.now() + LIMIT_MS;
  let url = new URL(start);
  while (Date.now() < deadline) {
    note(`GET ${url.href}`);
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      url = new URL(location, url);
      continue;
    }
    const body = await res.text();
    const refresh = /<meta\s+http-equiv="refresh"\s+content="(\d+)(?:;\s*url=([^"]*))?"/i.exec(body);
    if (!refresh) {
      note(`DONE ${res.status}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, Number(refresh[1]) * 1000));
    if (refresh[2]) url = new URL(refresh[2], url);
  }
  note('GAVE UP');
  process.exitCode = 1;
}

browse(process.argv[2]).catch((error) => {
  note(`FAILED ${error.message}`);
  process.exitCode = 1;
});
