import ts from 'typescript';

/** A tsconfig file read as tsc reads it (extends, includes, options); throws with tsc's words if it is broken. */
export function parseTsconfig(path: string): ts.ParsedCommandLine {
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
