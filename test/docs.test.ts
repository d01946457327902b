import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONFIGURATION_PAGE, withSettingsTable } from '../scripts/settings-table.js';

const root = fileURLToPath(new URL('..', import.meta.url));

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(root, 'docs'))).filter((name) => name.endsWith('.md')).map((name) => join('docs', name));
  return ['README.md', 'renderer/README.md', 'bench/README.md', ...docs];
}

/** The anchors GitHub gives a page's headings. */
function anchors(text: string): Set<string> {
  const found = new Set<string>();
  for (const [, heading] of text.matchAll(/^#+ +(.+)$/gm)) {
    found.add(
      heading!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- ]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return found;
}

describe('the docs', () => {
  it('have the settings table that main/settings.ts makes (npm run docs:settings makes it again)', async () => {
    const page = await readFile(CONFIGURATION_PAGE, 'utf8');
    assert.equal(page, withSettingsTable(page), 'docs/configuration.md and main/settings.ts disagree: run npm run docs:settings');
  });

  it('link only to files and headings that exist', async () => {
    const broken: string[] = [];
    for (const page of await pages()) {
      const text = await readFile(join(root, page), 'utf8');
      for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const path = target ? join(dirname(join(root, page)), target) : join(root, page);
        const found = await stat(path).catch(() => undefined);
        if (!found) broken.push(`${page}: ${target} does not exist`);
        else if (anchor && found.isFile() && path.endsWith('.md') && !anchors(await readFile(path, 'utf8')).has(anchor)) {
          broken.push(`${page}: ${relative(root, path)} has no heading #${anchor}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
