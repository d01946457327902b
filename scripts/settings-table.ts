/**
 * The settings table of docs/configuration.md, made from the one definition of the settings
 * (`main/settings.ts`). `npm run docs:settings` writes it into the page;
 * `test/docs.test.ts` fails when the page's table and the code disagree.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SETTINGS, type Setting } from '../main/settings.js';

export const CONFIGURATION_PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const BEGIN = '<!-- settings table: made by `npm run docs:settings` from main/settings.ts; edit there -->';
const END = '<!-- end of settings table -->';

const VALUE_OF: Record<Setting['kind'], string> = {
  text: 'text',
  port: 'port',
  count: 'whole number',
  seconds: 'seconds',
  minutes: 'minutes',
  boolean: '`true` or `false`',
  list: 'list',
  store: '`keychain` or `file`',
};

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (text: string): string => `\`${text}\``;

/** One row per setting: its file key, flag, variable, value, default and what it sets. */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as Array<[string, Setting]>).map(([name, s]) => {
    const variable =
      s.env === undefined
        ? ''
        : s.kind === 'boolean'
          ? code(`${s.env}=1`)
          : s.kind === 'list'
            ? `${code(s.env)} (comma-separated)`
            : code(s.env);
    return `| ${code(name)} | ${s.flag ? code(s.flag) : ''} | ${variable} | ${VALUE_OF[s.kind]} | ${cell(s.default)} | ${cell(s.about)} |`;
  });
  return [
    '| `settings.json` | flag | environment | value | default | what it sets |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** The page with its table made again from the code. */
export function withSettingsTable(page: string): string {
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`docs/configuration.md has no settings table between "${BEGIN}" and "${END}".`);
  return `${page.slice(0, begin)}${BEGIN}\n${settingsTable()}\n${page.slice(end)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = await readFile(CONFIGURATION_PAGE, 'utf8');
  const made = withSettingsTable(page);
  if (made !== page) await writeFile(CONFIGURATION_PAGE, made);
  process.stdout.write(
    made === page
      ? 'docs/configuration.md: the settings table is up to date.\n'
      : 'docs/configuration.md: the settings table was made again.\n',
  );
}
