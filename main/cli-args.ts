import { parseArgs } from 'node:util';
import { DEFAULT_HOST, DEFAULT_PORT, ENVIRONMENT, type ServeFlags } from './config.js';
import { PRODUCT_NAME } from './version.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'serve'; flags: ServeFlags }
  | { kind: 'token-create'; name: string; expires?: string; workspacePath?: string }
  | { kind: 'token-list'; json: boolean }
  | { kind: 'token-revoke'; id: string };

export const USAGE = `Usage:
  ${PRODUCT_NAME} [--port N] [--host ADDRESS] [--no-auth]
  ${PRODUCT_NAME} token create --name NAME [--expires 30d] [--workspace-path PATH]
  ${PRODUCT_NAME} token list [--json]
  ${PRODUCT_NAME} token revoke ID

Serves this machine to AI agents over MCP (Streamable HTTP at /mcp): read, write, edit,
bash and skill, with full access under this user's account. Auth is on by default: agents
send a bearer JWT, for example one made with "token create".

Options:
  --port N            port to listen on (default ${DEFAULT_PORT}; 0 picks a free one)
  --host ADDRESS      address to bind (default ${DEFAULT_HOST}); use 0.0.0.0 for remote agents
  --no-auth           accept requests without a token (loopback addresses only)
  -h, --help          show this help
  -v, --version       print the version

Environment:
${Object.entries(ENVIRONMENT).map(([name, text]) => `  ${name.padEnd(31)} ${text}`).join('\n')}
`;

export function parseCommand(argv: string[]): Command {
  if (argv[0] === 'token') return parseToken(argv.slice(1));
  const { values, positionals } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    'no-auth': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  if (positionals.length > 0) throw new UsageError(`Unknown command "${positionals[0]}". Run with --help to see the commands.`);
  const flags: ServeFlags = {};
  if (values.port !== undefined) flags.port = portNumber(values.port);
  if (values.host !== undefined) {
    if (!values.host.trim()) throw new UsageError('--host needs an address, for example 127.0.0.1 or 0.0.0.0.');
    flags.host = values.host.trim();
  }
  if (values['no-auth']) flags.auth = false;
  return { kind: 'serve', flags };
}

function parseToken(argv: string[]): Command {
  const [action, ...rest] = argv;
  switch (action) {
    case 'create': {
      const { values, positionals } = parse(rest, {
        name: { type: 'string' },
        expires: { type: 'string' },
        'workspace-path': { type: 'string' },
      });
      noPositionals(positionals, 'token create');
      if (!values.name) throw new UsageError('token create needs --name NAME, a label to tell the token apart later, for example --name ci-agent.');
      return { kind: 'token-create', name: values.name, expires: values.expires, workspacePath: values['workspace-path'] };
    }
    case 'list': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      noPositionals(positionals, 'token list');
      return { kind: 'token-list', json: values.json ?? false };
    }
    case 'revoke': {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError('token revoke needs exactly one token ID; "token list" shows them.');
      return { kind: 'token-revoke', id: positionals[0]! };
    }
    default:
      throw new UsageError(`"token" needs one of: create, list, revoke${action ? ` (got "${action}")` : ''}.`);
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run with --help to see the options.`);
  }
}

function noPositionals(positionals: string[], command: string): void {
  if (positionals.length > 0) throw new UsageError(`${command} does not take "${positionals[0]}". Run with --help to see the options.`);
}

function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`--port ${value} is not a port number. Use a whole number from 0 to 65535.`);
  }
  return Number(value);
}
