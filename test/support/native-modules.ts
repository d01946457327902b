// Why the tests of an optional native module are skipped here, or false where they run: a test that
// needs keytar (the real OS keychain) or node-pty (a terminal) passes it as its `skip`, and the run
// says why. Checked as the app checks them: by loading each.
import type { NativeModuleName } from '../../common/api/server.js';
import { checkNativeModules } from '../../main/native-modules.js';

const modules = await checkNativeModules();

function skipWithout(name: NativeModuleName, what: string): string | false {
  const module = modules.find((m) => m.name === name);
  return module && !module.loaded ? `${name} cannot be loaded here (${module.problem}): ${what} is not tested` : false;
}

export const KEYTAR_SKIP = skipWithout('keytar', 'the OS keychain');
export const NODE_PTY_SKIP = skipWithout('node-pty', 'a command under a terminal');
