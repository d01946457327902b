#!/usr/bin/env node
import { applyWorkingDirectory, ConfigError } from './config.js';
import { CommandFailedError, helpText, parseCommand, takeConfigFlag, UsageError } from './cli-args.js';
import { environmentWith, readSettingsFile } from './settings-file.js';
import { PRODUCT_NAME, VERSION } from './version.js';

// Each command's module is loaded when that command runs: a subcommand loads only what it uses,
// and the server starts without the code of the commands it never runs.
async function main(argv: string[]): Promise<number> {
  const { configFile, rest } = takeConfigFlag(argv);
  const command = parseCommand(rest);
  if (command.kind === 'help') {
    process.stdout.write(helpText(command.topic));
    return 0;
  }
  if (command.kind === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // The settings file under the environment: every command below reads this environment.
  const file = readSettingsFile(configFile);
  const env = environmentWith(file.settings);
  // The product spec (persona-mcp-workspace.md): WORKSPACE_CWD is applied before anything else.
  applyWorkingDirectory(env);
  switch (command.kind) {
    case 'serve':
      return (await import('./cli-serve.js')).serve(command.flags, env);
    case 'config':
      return (await import('./cli-config.js')).configCommand(command.flags, command.json, file, env);
    case 'open':
      return (await import('./cli-open.js')).openCommand(env);
    case 'status':
      return (await import('./cli-status.js')).statusCommand(command.json, env);
    case 'completion':
      process.stdout.write((await import('./cli-completion.js')).completionScript(command.shell));
      return 0;
    case 'uninstall':
      return (await import('./cli-uninstall.js')).uninstallCommand(command.yes, file, env);
    case 'token-create':
    case 'token-list':
    case 'token-revoke':
    case 'token-tool-search':
      return (await import('./cli-tokens.js')).tokenCommand(command, env);
    case 'approve-list':
    case 'approve':
    case 'deny':
    case 'clients-list':
    case 'clients-revoke':
      return (await import('./cli-agent-sign-ins.js')).signInCommand(command, env);
    case 'places-policy':
      return (await import('./cli-places.js')).policyCommand(command, env);
    case 'places-network':
      return (await import('./cli-places.js')).networkCommand(command, env);
    case 'places-limits':
      return (await import('./cli-places.js')).limitsCommand(command, env);
    case 'clients-connect':
      return (await import('./cli-client-configs.js')).clientConnectCommand(command, env);
    case 'connections-import':
      return (await import('./cli-client-configs.js')).importCommand(command, env);
    case 'places-seal':
      return (await import('./cli-places.js')).sealCommand(command, env);
    case 'places-tool-search':
      return (await import('./cli-places.js')).placeToolSearchCommand(command, env);
    default:
      return (await import('./cli-places.js')).placeCommand(command, env);
  }
}

/** The exit statuses that USAGE documents. */
const EXIT = { failed: 1, misuse: 2, notFound: 3 } as const;

/** The message of an error the user can act on (undefined for a bug, whose stack is then shown), and the exit status. */
async function userMessage(error: unknown): Promise<{ message: string | undefined; status: number }> {
  if (error instanceof UsageError || error instanceof ConfigError) return { message: error.message, status: EXIT.misuse };
  if (error instanceof CommandFailedError) return { message: error.message, status: EXIT.failed };
  // Only on failure: these modules know every error class of the app.
  const [{ JwtConfigError }, { userError }] = await Promise.all([import('./auth/jwt-verifier.js'), import('./user-errors.js')]);
  if (error instanceof JwtConfigError) return { message: error.message, status: EXIT.misuse };
  const known = userError(error);
  if (!known) return { message: undefined, status: EXIT.failed };
  // As the HTTP status of the same error says: 400 is a value that is not right, 404 not found.
  const status = known.status === 400 ? EXIT.misuse : known.status === 404 ? EXIT.notFound : EXIT.failed;
  return { message: known.message, status };
}

/**
 * Exits once stdout and stderr have handed everything to the OS: writes to a pipe are asynchronous,
 * and exiting before they finish cuts the output (at the pipe's 64 KiB, say, with `| head`).
 */
function exitAfterOutput(code: number): void {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(exitAfterOutput, async (error: unknown) => {
  const { message, status } = await userMessage(error).catch(() => ({ message: undefined, status: EXIT.failed }));
  process.stderr.write(`${PRODUCT_NAME}: ${message ?? (error as Error).stack ?? String(error)}\n`);
  exitAfterOutput(status);
});
