import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

// package.json sits one folder up from the source (main), two from the built file (dist/main) and
// three from a chunk of the bundled CLI (dist/main/chunks).
function findPackage(): { root: string; version: string } {
  for (const relative of ['../package.json', '../../package.json', '../../../package.json']) {
    const url = new URL(relative, import.meta.url);
    try {
      const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'persona-mcp-workspace' && pkg.version) return { root: dirname(fileURLToPath(url)), version: pkg.version };
    } catch {
      // try the next candidate
    }
  }
  throw new Error('persona-mcp-workspace: package.json not found beside the program; reinstall it.');
}

const pkg = findPackage();

export const PRODUCT_NAME = 'persona-mcp-workspace';
export const VERSION = pkg.version;
/** The installed package's folder (holds package.json and dist/). */
export const PACKAGE_ROOT = pkg.root;
