/**
 * The type check and the type-aware lint over one TypeScript program per tsconfig (`npm run check`,
 * which the whole `npm test` runs). Both need the same programs and their types: built once here,
 * the two cost about half of `npm run typecheck` and `eslint .` run apart (measured: 47 s of CPU
 * against 85 s), since the lint's rules ask the checker what the type check already worked out.
 *
 * Reports what `tsc --noEmit` reports for tsconfig.json and renderer/tsconfig.json, then ESLint's
 * findings under eslint.config.js; exits 1 on either.
 */
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseTsconfig } from './tsconfig-files.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The projects `npm run typecheck` checks. */
const PROJECTS = ['tsconfig.json', 'renderer/tsconfig.json'];
/** Linted but in no project (eslint.config.js's allowDefaultProject): given a program of their own, not type-checked, as there. */
const OUTSIDE_PROJECTS = ['vite.config.ts'];

function projectProgram(configFile: string): ts.Program {
  const config = parseTsconfig(ts.sys.resolvePath(`${ROOT}${configFile}`));
  if (config.errors.length > 0) throw new Error(ts.formatDiagnostics(config.errors, formatHost));
  return ts.createProgram({ rootNames: config.fileNames, options: config.options, configFileParsingDiagnostics: config.errors });
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (name) => name,
  getCurrentDirectory: () => ROOT,
  getNewLine: () => '\n',
};

const programs = PROJECTS.map(projectProgram);
const rootOptions = programs[0]!.getCompilerOptions();
programs.push(
  ts.createProgram(
    OUTSIDE_PROJECTS.map((file) => `${ROOT}${file}`),
    { ...rootOptions, noEmit: true },
  ),
);

let failed = false;
const typeErrors = programs.slice(0, PROJECTS.length).flatMap((program) => ts.getPreEmitDiagnostics(program));
if (typeErrors.length > 0) {
  failed = true;
  const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stdout.write(`${format(typeErrors, formatHost)}\nType check: ${typeErrors.length} error${typeErrors.length === 1 ? '' : 's'}.\n`);
}

// The programs above replace the project service that eslint.config.js names: every linted file is in one of them.
const eslint = new ESLint({ cwd: ROOT, overrideConfig: { languageOptions: { parserOptions: { projectService: false, programs } } } });
const results = await eslint.lintFiles(['.']);
if (results.some((result) => result.errorCount + result.warningCount > 0)) {
  failed = true;
  process.stdout.write(`${await (await eslint.loadFormatter('stylish')).format(results)}\n`);
}
process.exitCode = failed ? 1 : 0;
