/**
 * The upstream MCP server of the gateway benchmark, in a process of its own: the end-to-end tests'
 * fixture (e2e/fixtures/upstream-server.ts), a real Streamable HTTP MCP server on loopback whose
 * `echo` tool answers `echo: <text>`, and which answers 401 to any request without the API key.
 *
 *   BENCH_UPSTREAM_KEY=... node --import tsx bench/upstream-server.ts [--header X-Api-Key] [--hang-on-signal]
 *
 * With --hang-on-signal, SIGUSR2 makes it hang (read every request, never answer), and the next
 * SIGUSR2 makes it answer again (the isolation benchmark).
 *
 * Prints `upstream listening on <url>` on stdout; SIGTERM or SIGINT closes it.
 */
import { startUpstream } from '../e2e/fixtures/upstream-server.js';

const at = process.argv.indexOf('--header');
const header = at === -1 ? 'X-Api-Key' : process.argv[at + 1]!;
const value = process.env.BENCH_UPSTREAM_KEY;
if (!value) {
  process.stderr.write('upstream: set BENCH_UPSTREAM_KEY to the API key the server must require\n');
  process.exit(2);
}

const upstream = await startUpstream({ name: 'bench-upstream', apiKey: { header, value } });

// The fixture keeps every request's headers and a count per tool, for the tests' checks. A bench
// makes tens of thousands of requests: forget them now and then so memory stays flat (the same
// for calls made directly and through our gateway, as both go to this one process).
const forget = setInterval(() => {
  upstream.requests.length = 0;
  upstream.calls.clear();
}, 1000);

if (process.argv.includes('--hang-on-signal')) {
  let hanging = false;
  process.on('SIGUSR2', () => {
    hanging = !hanging;
    upstream.setMode(hanging ? 'hang' : 'ok');
  });
}

process.stdout.write(`upstream listening on ${upstream.url}\n`);

const stop = (): void => {
  clearInterval(forget);
  void upstream.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
