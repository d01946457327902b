#!/usr/bin/env node
import { applyWorkingDirectory, ConfigError, loadConfig, stateDirFrom } from './config.js';
import { parseCommand, USAGE, UsageError, type Command } from './cli-args.js';
import { AgentTokenStore, TokenInputError, UnknownTokenError } from './auth/agent-tokens.js';
import { JwtConfigError } from './auth/jwt-verifier.js';
import { SigningKeyError } from './auth/signing-key.js';
import { TokenStoreError } from './auth/token-file.js';
import { Host } from './host.js';
import { PRODUCT_NAME, VERSION } from './version.js';

/** Errors whose message already tells the user what to do: print it alone, no stack. */
const USER_ERRORS = [UsageError, ConfigError, JwtConfigError, TokenInputError, UnknownTokenError, TokenStoreError, SigningKeyError];

async function main(argv: string[]): Promise<number> {
  // The spec: WORKSPACE_CWD is applied before anything else.
  applyWorkingDirectory();
  const command = parseCommand(argv);
  switch (command.kind) {
    case 'help':
      process.stdout.write(USAGE);
      return 0;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case 'serve':
      return serve(command.flags);
    default:
      return tokenCommand(command, new AgentTokenStore({ stateDir: stateDirFrom() }));
  }
}

async function serve(flags: Extract<Command, { kind: 'serve' }>['flags']): Promise<number> {
  const config = loadConfig(flags);
  const host = new Host(config);
  const url = await host.start().catch((error: unknown) => {
    const status = host.status;
    throw new ConfigError(status.state === 'failed' ? status.error : String(error));
  });
  const auth = config.auth ? `JWT; app tokens${externalKeys(config.jwt)}` : 'off (--no-auth, loopback only)';
  process.stdout.write(`${PRODUCT_NAME} listening on ${url} (auth: ${auth})\n`);

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`${signal} received, stopping...\n`);
      // A second signal means "now": skip the clean shutdown.
      process.once(signal, () => process.exit(130));
      host.stop().then(resolve, (error: unknown) => {
        process.stderr.write(`Stopping failed: ${(error as Error).message}\n`);
        process.exit(1);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

function externalKeys(jwt: ReturnType<typeof loadConfig>['jwt']): string {
  const sources = [jwt.secret && 'HS256 secret', jwt.publicKeyPem && 'public key', jwt.jwksUrl && 'JWKS'].filter(Boolean);
  return sources.length ? ` + ${sources.join(' + ')}` : '';
}

async function tokenCommand(command: Exclude<Command, { kind: 'help' | 'version' | 'serve' }>, tokens: AgentTokenStore): Promise<number> {
  switch (command.kind) {
    case 'token-create': {
      const created = await tokens.create({
        name: command.name,
        ...(command.expires !== undefined && { expiresIn: command.expires }),
        ...(command.workspacePath !== undefined && { workspacePath: command.workspacePath }),
      });
      // The token alone on stdout, so `TOKEN=$(... token create ...)` works; the rest on stderr.
      process.stderr.write(`Created token ${created.id} "${created.name}", ${created.expiresAt ? `expires ${created.expiresAt}` : 'never expires'}${created.workspacePath ? `, place ${created.workspacePath}` : ''}.\nIt is shown only now; revoke it with: ${PRODUCT_NAME} token revoke ${created.id}\n`);
      process.stdout.write(`${created.token}\n`);
      return 0;
    }
    case 'token-list': {
      const list = await tokens.list();
      if (command.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      } else if (list.length === 0) {
        process.stdout.write(`No tokens yet. Create one with: ${PRODUCT_NAME} token create --name NAME\n`);
      } else {
        for (const t of list) {
          const state = t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt ? `expires ${t.expiresAt}` : 'never expires';
          process.stdout.write(`${t.id}  ${t.name}  created ${t.createdAt}  ${state}${t.workspacePath ? `  place ${t.workspacePath}` : ''}\n`);
        }
      }
      return 0;
    }
    case 'token-revoke': {
      const revoked = await tokens.revoke(command.id);
      process.stdout.write(`Revoked token ${revoked.id} "${revoked.name}". A running server refuses it from now on.\n`);
      return 0;
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const known = USER_ERRORS.some((type) => error instanceof type);
    process.stderr.write(`${PRODUCT_NAME}: ${known ? (error as Error).message : (error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);
