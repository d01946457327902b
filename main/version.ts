import { readFileSync } from 'node:fs';

// package.json sits two folders up from the built file (dist/main) and one up from the source (main).
function readVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'persona-mcp-workspace' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

export const PRODUCT_NAME = 'persona-mcp-workspace';
export const VERSION = readVersion();
