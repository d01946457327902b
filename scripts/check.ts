/**
 * The type check and the type-aware lint over one TypeScript program per tsconfig (`npm run check`,
 * which the whole `npm test` runs). Both need the same programs and their types: built once here,
 * the two cost about half of `npm run typecheck` and `eslint .` run apart (measured: 47 s of CPU
 * against 85 s), since the lint's rules ask the checker what the type check already worked out.
 *
 * Reports what `tsc --noEmit` reports for tsconfig.json and renderer/tsconfig.json, then ESLint's
 * findings under eslint.config.js; exits 1 on either.
 *
 *   check.ts [CACHE_FILE]
 *
 * With CACHE_FILE (the whole run's): a check that passed over the very same files is not run again
 * (check-cache.ts says what "the same" takes in).
 */
import { fileURLToPath } from 'node:url';
import type { Program } from 'typescript';
import { cachedCheck } from './check-cache.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The projects `npm run typecheck` checks. */
const PROJECTS = ['tsconfig.json', 'renderer/tsconfig.json'];
/** Linted but in no project (eslint.config.js's allowDefaultProject): given a program of their own, not type-checked, as there. */
const OUTSIDE_PROJECTS = ['vite.config.ts'];

/** Runs the type check and the lint, printing what they find; whether both passed. */
async function check(): Promise<boolean> {
  // Loaded only for a check that runs: a skipped one costs no more than reading the files.
  const { default: ts } = await import('typescript');
  const { ESLint } = await import('eslint');
  const { parseTsconfig } = await import('./tsconfig-files.js');

  const formatHost: import('typescript').FormatDiagnosticsHost = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  };
  const projectProgram = (configFile: string): Program => {
    const config = parseTsconfig(ts.sys.resolvePath(`${ROOT}${configFile}`));
    if (config.errors.length > 0) throw new Error(ts.formatDiagnostics(config.errors, formatHost));
    return ts.createProgram({ rootNames: config.fileNames, options: config.options, configFileParsingDiagnostics: config.errors });
  };

  const programs = PROJECTS.map(projectProgram);
  const rootOptions = programs[0]!.getCompilerOptions();
  programs.push(
    ts.createProgram(
      OUTSIDE_PROJECTS.map((file) => `${ROOT}${file}`),
      { ...rootOptions, noEmit: true },
    ),
  );

  let passed = true;
  const typeErrors = programs.slice(0, PROJECTS.length).flatMap((program) => ts.getPreEmitDiagnostics(program));
  if (typeErrors.length > 0) {
    passed = false;
    const format = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
    process.stdout.write(
      `${format(typeErrors, formatHost)}\nType check: ${typeErrors.length} error${typeErrors.length === 1 ? '' : 's'}.\n`,
    );
  }

  // The programs above replace the project service that eslint.config.js names: every linted file is in one of them.
  const eslint = new ESLint({ cwd: ROOT, overrideConfig: { languageOptions: { parserOptions: { projectService: false, programs } } } });
  const results = await eslint.lintFiles(['.']);
  if (results.some((result) => result.errorCount + result.warningCount > 0)) {
    passed = false;
    process.stdout.write(`${await (await eslint.loadFormatter('stylish')).format(results)}\n`);
  }
  return passed;
}

const cacheFile = process.argv[2];
if (cacheFile === undefined) process.exitCode = (await check()) ? 0 : 1;
else {
  const { passed, skipped } = await cachedCheck(ROOT, cacheFile, check);
  if (skipped) console.log('Type check and lint: passed before over these very files (the same paths and contents); not run again.');
  process.exitCode = passed ? 0 : 1;
}
