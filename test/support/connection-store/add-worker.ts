// Child process for the cross-process tests: says "ready", waits for a line on stdin (so that both
// workers start together), then adds `count` connections at once to one place. It watches and
// never closes: exiting anyway shows that the poll never keeps a process alive.
import { once } from 'node:events';
import { ConnectionStore } from '../../../main/connections/store/connection-store.js';

const [stateDir, prefix, count] = process.argv.slice(2);
const store = new ConnectionStore({ stateDir: stateDir! });
await store.watch();
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.destroy();
await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    store.add({
      owner: 'local',
      root: 'Crew/alpha',
      catalogId: `${prefix}-${i}`,
      displayName: `${prefix} ${i}`,
      url: `https://${prefix}-${i}.example/mcp`,
      transport: 'streamable-http',
      auth: { kind: 'none' },
    }),
  ),
);
