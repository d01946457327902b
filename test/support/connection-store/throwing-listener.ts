// Child process: a listener that throws must not stop the others, nor the write; its error surfaces.
import { ConnectionStore } from '../../../main/connections/store/connection-store.js';
import { linear } from './linear.js';

const store = new ConnectionStore({ stateDir: process.argv[2]! });
await store.watch();
store.onChange(() => {
  throw new Error('listener broke');
});
store.onChange((roots) => console.log(`second listener: ${roots.join(',')}`));
const added = await store.add(linear());
console.log(`added ${added.name}`);
store.close();
