import { createRequire } from 'node:module';
import type TypeScript from 'typescript';

/**
 * TypeScript's compiler API, loaded with require: an ES module `import` of its 9 MB CommonJS file
 * first scans the whole file for its export names, about 1.5 s of CPU under tsx.
 */
const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;

/** A tsconfig file read as tsc reads it (extends, includes, options); throws with tsc's words if it is broken. */
export function parseTsconfig(path: string): TypeScript.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(
    path,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error(`${path} could not be read`);
  return config;
}
