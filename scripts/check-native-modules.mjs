// The package's postinstall: names each optional native module (keytar, node-pty) that npm could
// not build, what works without it and the one step that fixes it (main/native-modules.ts says how).
// It never fails the install: the app runs without them.
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';

const PRODUCT = 'persona-mcp-workspace';

/** The check: the source in a clone (through tsx, a dev dependency there), else the built package's. */
async function loadCheck() {
  const source = new URL('../main/native-modules.ts', import.meta.url);
  if (existsSync(source)) {
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(source.href, import.meta.url);
  }
  return import(new URL('../dist/main/native-modules.js', import.meta.url).href);
}

/**
 * To stderr; and, where npm keeps that from the person installing (`npm install -g` hides what a
 * dependency's script prints unless --foreground-scripts), to their terminal too.
 */
function say(text) {
  process.stderr.write(text);
  if (process.stderr.isTTY) return;
  try {
    const terminal = openSync('/dev/tty', 'w');
    writeSync(terminal, text);
    closeSync(terminal);
  } catch {
    // No terminal (CI, a service): stderr, in npm's log, is all there is.
  }
}

try {
  const { checkNativeModules, describeMissing } = await loadCheck();
  for (const line of describeMissing(await checkNativeModules())) say(`${PRODUCT}: ${line}\n`);
} catch (error) {
  const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
  say(`${PRODUCT}: the optional native modules (keytar, node-pty) could not be checked (${why}); the server names them when it starts.\n`);
}
process.exitCode = 0;
