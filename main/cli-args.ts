import { JWT_ALGORITHMS, jwtAlgorithm, type JwtAlgorithm } from '../common/api/client-credentials.js';
import { CLIENTS, type ClientId } from '../common/client-ids.js';
import { parseArgs } from 'node:util';
import type { ConnectionEdit } from '../common/api/connections.js';
import type { ServeFlags } from './config.js';
import { DEFAULT_CONTROL_PORT, DEFAULT_HOST, DEFAULT_PORT, SETTINGS, type Setting } from './settings.js';
import { PRODUCT_NAME } from './version.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A command could not do what it was asked, for a reason its message gives with what to do (exit status 1). */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
}

export type Command =
  /** `topic`: the command whose usage to show (empty: everything). */
  | { kind: 'help'; topic: string[] }
  | { kind: 'version' }
  | { kind: 'serve'; flags: ServeFlags }
  | { kind: 'config'; flags: ServeFlags; json: boolean }
  | { kind: 'open' }
  | { kind: 'status'; json: boolean }
  | { kind: 'completion'; shell: Shell }
  | { kind: 'uninstall'; yes: boolean }
  | { kind: 'token-create'; name: string; expires?: string | undefined; workspacePath?: string | undefined }
  | { kind: 'token-list'; json: boolean }
  | { kind: 'token-revoke'; id: string }
  | { kind: 'token-tool-search'; id: string; mode?: string; json: boolean }
  | { kind: 'approve-list'; json: boolean }
  | { kind: 'approve'; code: string; workspacePath?: string }
  | { kind: 'deny'; code: string }
  | { kind: 'clients-list'; json: boolean }
  | { kind: 'clients-revoke'; id: string }
  | {
      kind: 'clients-connect';
      client: ClientId;
      workspacePath: string;
      auth: 'token' | 'oauth';
      scope: 'user' | 'project';
      name?: string;
      replace: boolean;
    }
  | { kind: 'connections-import'; workspacePath: string; items: string[]; all: boolean; json: boolean }
  | { kind: 'connections-list'; workspacePath: string; json: boolean }
  | {
      kind: 'connections-add';
      workspacePath: string;
      catalog?: string;
      secret?: string;
      server?: {
        url: string;
        name?: string;
        transport?: 'streamable-http' | 'sse';
        header?: { name: string; prefix?: string; secret: string };
      };
      /** `hosts` absent: those its launcher (npx, uvx) installs from, as the page fills in. */
      local?: { command: string; args: string[]; env: Record<string, string>; hosts?: string[]; name?: string };
    }
  | { kind: 'connections-remove'; workspacePath: string; name: string; owner?: string }
  | { kind: 'connections-test'; workspacePath: string; name: string; owner?: string }
  | { kind: 'connections-show'; workspacePath: string; name: string; owner?: string; json: boolean }
  | {
      kind: 'connections-edit';
      workspacePath: string;
      name: string;
      owner?: string;
      edit: ConnectionEdit;
      /**
       * The client secret (of the own OAuth app, or of the client credentials) is read from stdin
       * (never the command line, where the process list shows it).
       */
      clientSecretFromStdin: boolean;
      /** Client credentials to set: their client ID, with the secret or the private key read from stdin. */
      credentials?: { clientId: string; privateKeyFromStdin?: { algorithm?: JwtAlgorithm } };
    }
  | { kind: 'secrets-list'; workspacePath: string; json: boolean }
  | { kind: 'secrets-set'; workspacePath: string; name: string; replace: boolean }
  | { kind: 'secrets-remove'; workspacePath: string; name: string }
  | { kind: 'places-policy'; place: string; policy?: string; folders: string[]; json: boolean }
  | { kind: 'places-seal'; place: string; unseal: boolean; paths: string[]; json: boolean }
  /** `hosts` absent: show; empty: off. */
  | { kind: 'places-network'; place: string; hosts?: string[]; json: boolean }
  /** `limits`: what to change (undefined: back to the machine's default); absent: show them. */
  | {
      kind: 'places-limits';
      place: string;
      limits?: Partial<Record<'processes' | 'memoryMb' | 'tmpMb', number | undefined>>;
      json: boolean;
    }
  | { kind: 'places-tool-search'; place: string; mode?: string; json: boolean };

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export const USAGE = `Usage:
  ${PRODUCT_NAME} [--port N] [--host ADDRESS] [--control-port N] [--no-auth] [--client-metadata-url URL]
  ${PRODUCT_NAME} config [--json] [--port N] [--host ADDRESS] [--control-port N] [--no-auth] [--client-metadata-url URL]
  ${PRODUCT_NAME} open                 a fresh one-time link to the running server's page
  ${PRODUCT_NAME} status [--json]      whether a server runs on this state dir, where, and what it lacks
  ${PRODUCT_NAME} help
  ${PRODUCT_NAME} completion bash|zsh|fish   a script that completes commands and options in your shell
  ${PRODUCT_NAME} uninstall [--yes]    removes the state dir, settings, keychain entries and saved outputs
  ${PRODUCT_NAME} token create --name NAME [--expires 30d] [--workspace-path PATH]
  ${PRODUCT_NAME} token list [--json]
  ${PRODUCT_NAME} token revoke ID
  ${PRODUCT_NAME} token tool-search ID [on|off|auto] [--json]
  ${PRODUCT_NAME} approve [--json]                 (lists the agent sign-ins waiting for you)
  ${PRODUCT_NAME} approve CODE [--workspace-path PATH]
  ${PRODUCT_NAME} deny CODE
  ${PRODUCT_NAME} clients list [--json]
  ${PRODUCT_NAME} clients revoke ID
  ${PRODUCT_NAME} clients connect claude-desktop|cursor|vscode|claude-code [--workspace-path PATH] [--oauth]
                                  [--project] [--name NAME] [--replace]   (writes this server into its configuration)
  ${PRODUCT_NAME} connections list [--workspace-path PATH] [--json]
  ${PRODUCT_NAME} connections add [--workspace-path PATH] --catalog ID [--secret NAME]
  ${PRODUCT_NAME} connections add [--workspace-path PATH] --url URL [--name NAME] [--transport sse]
                                  [--header HEADER --secret NAME [--prefix 'Bearer ']]
  ${PRODUCT_NAME} connections add [--workspace-path PATH] --command PROGRAM [--name NAME] [--env VAR=SECRET]...
                                  [--host HOST]... [-- ARGUMENT...]   (a local server, run over stdio; without
                                  --host, npx and uvx may reach the host they install from under strict)
  ${PRODUCT_NAME} connections import [--workspace-path PATH] [--json] [--all | ID...]
                                  (lists, or adds, the servers of Claude Desktop, Cursor, VS Code and Claude Code)
  ${PRODUCT_NAME} connections remove NAME [--workspace-path PATH] [--owner ID]
  ${PRODUCT_NAME} connections test NAME [--workspace-path PATH] [--owner ID]
  ${PRODUCT_NAME} connections show NAME [--workspace-path PATH] [--owner ID] [--json]
  ${PRODUCT_NAME} connections edit NAME [--workspace-path PATH] [--owner ID] [--name NAME] [--url URL] [--transport sse]
      [--header NAME --secret SECRET [--prefix TEXT] | --no-header] [--tool-off TOOL]... [--tool-on TOOL]...
      [--client-id ID [--client-secret-stdin] | --no-own-app]   (your own OAuth app; signs out, sign in again)
      [--client-credentials ID (--client-secret-stdin | --private-key-stdin [--signing-algorithm ALG])
       | --no-client-credentials]   (a machine login: logs in now, no browser; the secret or PKCS #8 key from stdin)
  ${PRODUCT_NAME} secrets list [--workspace-path PATH] [--json]
  ${PRODUCT_NAME} secrets set NAME [--workspace-path PATH] [--replace]   (the value is read from stdin;
                                  --replace to change the value of a secret the place has)
  ${PRODUCT_NAME} secrets remove NAME [--workspace-path PATH]
  ${PRODUCT_NAME} places policy PLACE [machine|place|strict] [--folder DIR ...] [--json]
  ${PRODUCT_NAME} places network PLACE [off | HOST ...] [--json]
  ${PRODUCT_NAME} places seal PLACE [PATH | STORE ...] [--json]     ${PRODUCT_NAME} places unseal PLACE STORE|PATH ... [--json]
  ${PRODUCT_NAME} places limits PLACE [processes=N] [memory=SIZE] [tmp=SIZE] [NAME=default] [default] [--json]
  ${PRODUCT_NAME} places tool-search PLACE [on|off|auto] [--json]

Serves this machine to AI agents over MCP (Streamable HTTP at /mcp): read, write, edit,
bash and skill, with full access under this user's account. Auth is on by default: agents
send a bearer JWT, for example one made with "token create", or sign in with OAuth
(Claude Code, VS Code, Cursor, ...): you approve each new client with "approve CODE".

A place is a folder of the workspace root (Workflow/<name>, Crew/<id>,
_users/<owner>/Chats/Work/projects/<id>, _users/<owner>/Chats/Code/projects/<id>);
without --workspace-path, commands act on the place "This machine". Connections and
secrets commands act as the person who runs this app.

"places policy" shows or sets what a place's agents reach: machine (everything, the
default), place (read all but the app's state and other places; write the place, the
temp folder and each --folder) or strict (only the place and each --folder).
PLACE "." is This machine, whose policy applies to tokens that name no place.

"places network" shows or sets the hosts a place's sandboxed commands may reach, through
the app's filtering proxy: under strict only those (off, the default: no network at all),
under place any public host and those. A HOST is a name (api.github.com), a wildcard for
the names under a domain (*.npmjs.org), an IP address, or * for any public host. Loopback,
private and this machine's addresses are reached only through a name listed exactly
(localhost, db.internal); the app's own ports never.

"places limits" shows or sets the limits of a place's sandboxed commands together: processes
and threads at once, memory (files in its /tmp count) and its private /tmp's size. A SIZE is
in MiB, or with M or G (512M, 4G); NAME=default, or default alone for all, goes back to the
machine's defaults (WORKSPACE_SANDBOX_PROCESSES, _MEMORY_MB, _TMP_MB). It also says which
limits this machine cannot enforce, as the running server found at its start.

"tool-search" shows or sets whether agents get search_tools and call_tool in place of a
place's connection tools: on, off, or auto (on above WORKSPACE_TOOL_SEARCH_THRESHOLD tools).
A token's own setting wins over its place's.

Every setting can also live in a settings file (JSON, the names "${PRODUCT_NAME} config"
prints): settings.json in the platform's config folder (Linux: $XDG_CONFIG_HOME/${PRODUCT_NAME}),
or the file --config names. A flag beats the environment, which beats the file.

Options:
  --config FILE       the settings file to use instead of the one in the config folder
  --port N            port of the MCP endpoint (default ${DEFAULT_PORT}; 0 picks a free one)
  --host ADDRESS      address to bind (default ${DEFAULT_HOST}); use 0.0.0.0 for remote agents
  --control-port N    loopback port of the page and its API (default ${DEFAULT_CONTROL_PORT})
  --no-auth           accept requests without a token (loopback addresses only)
  --client-metadata-url URL
                      https URL of this app's OAuth client ID metadata document, which you
                      host: sign-in uses it as the client_id where a server accepts one
  -h, --help          show this help (after a command: that command's usage)
  --json              after a command that lists or shows: print that as JSON, in the shapes of the API
  -v, --version       print the version

Exit status: 0 done, 1 failed (the message says why), 2 misuse (a command, option, value or
setting that is not right), 3 not found (no such token, client, connection, secret or person).

Environment:
${(Object.values(SETTINGS) as Setting[]).flatMap((s) => (s.env ? [`  ${s.env.padEnd(31)} ${environmentHelp(s)}`] : [])).join('\n')}
`;

/** A variable's line in --help: what it sets, its flag, and its default. */
function environmentHelp(setting: Setting): string {
  const how = setting.kind === 'boolean' ? 'Set to 1: ' : '';
  const about = how ? setting.about.charAt(0).toLowerCase() + setting.about.slice(1) : setting.about;
  return `${how}${about}${setting.flag ? ` As ${setting.flag}.` : ''} Default: ${setting.default}.`;
}

/** Takes `--config FILE` (or `--config=FILE`), which every command accepts, out of the arguments. */
export function takeConfigFlag(argv: string[]): { configFile?: string; rest: string[] } {
  const rest: string[] = [];
  let configFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg !== '--config' && !arg.startsWith('--config=')) {
      rest.push(arg);
      continue;
    }
    const value = arg === '--config' ? argv[++i] : arg.slice('--config='.length);
    if (!value || value.startsWith('-'))
      throw new UsageError('--config needs the path of a settings file, for example --config ./settings.json.');
    configFile = value;
  }
  return { ...(configFile !== undefined && { configFile }), rest };
}

/** An option a command's usage names, and whether a value follows it (`--name NAME`) or not (`[--json]`). */
export interface OptionSpec {
  name: string;
  takesValue: boolean;
}

/**
 * One command as USAGE writes it: its words (`token create`, `approve`; none for the server
 * itself), the options its usage lines name, and the words its first argument is one of
 * (`bash|zsh|fish`). --help, "did you mean" and shell completion all read this table.
 */
export interface CommandSpec {
  words: string[];
  options: OptionSpec[];
  choices: string[];
}

const WORD = /^[a-z][a-z-]*$/;

/** USAGE's command lines, from after "Usage:" to the first empty line. */
function usageLines(): string[] {
  return USAGE.slice(0, USAGE.indexOf('\n\n')).split('\n').slice(1);
}

/** The options every command takes: those the Options section names apart from the server's own. */
const GLOBAL_OPTIONS: OptionSpec[] = [
  { name: '--config', takesValue: true },
  { name: '--help', takesValue: false },
];

export const COMMAND_TABLE: readonly CommandSpec[] = (() => {
  const specs = new Map<string, CommandSpec>();
  let current: CommandSpec | undefined;
  // Each text from the program's name to the next (a line may hold two), with the lines that continue it.
  for (const line of usageLines()) {
    const parts = line.split(`${PRODUCT_NAME}`);
    if (parts.length === 1 && current) addUsageText(current, line);
    for (const part of parts.slice(1)) {
      const tokens = part.split(' ').slice(1);
      const words: string[] = [];
      // A command and at most one subcommand: lowercase words, not a choice (`bash|zsh`).
      while (words.length < 2 && WORD.test(tokens[words.length] ?? '')) words.push(tokens[words.length]!);
      const key = words.join(' ');
      current = specs.get(key) ?? { words, options: [], choices: [] };
      specs.set(key, current);
      const first = tokens[words.length] ?? '';
      if (/^[a-z][a-z-]*(\|[a-z][a-z-]*)+$/.test(first)) current.choices.push(...first.split('|'));
      addUsageText(current, tokens.slice(words.length).join(' '));
    }
  }
  return [...specs.values()];
})();

/** Adds the options a piece of usage names: one that a value follows where it first appears takes one. */
function addUsageText(spec: CommandSpec, text: string): void {
  for (const match of text.matchAll(/(--[a-z][a-z0-9-]*)( [^\s[(|-]\S*)?/g)) {
    if (!spec.options.some((option) => option.name === match[1]))
      spec.options.push({ name: match[1]!, takesValue: match[2] !== undefined });
  }
}

/** The options `words` takes: its usage's, and those every command takes (the server also --version). */
export function optionsOf(spec: CommandSpec): OptionSpec[] {
  const global = spec.words.length === 0 ? [...GLOBAL_OPTIONS, { name: '--version', takesValue: false }] : GLOBAL_OPTIONS;
  return [...spec.options, ...global.filter((option) => !spec.options.some((own) => own.name === option.name))];
}

/** The command words of USAGE: each command, and each one's subcommands (none for most). */
const COMMANDS: ReadonlyMap<string, string[]> = (() => {
  const commands = new Map<string, string[]>();
  for (const { words } of COMMAND_TABLE) {
    const [command, sub] = words;
    if (command === undefined) continue;
    const subs = commands.get(command) ?? [];
    if (sub && !subs.includes(sub)) subs.push(sub);
    commands.set(command, subs);
  }
  return commands;
})();

/**
 * The usage of a command (its lines of USAGE), or of all; a word that is no command is refused with
 * the command it may have meant.
 */
export function helpText(topic: string[]): string {
  if (topic.length === 0) return USAGE;
  checkCommandWords(topic);
  const words = COMMANDS.get(topic[0]!)!.includes(topic[1] ?? '') ? topic.slice(0, 2) : topic.slice(0, 1);
  const start = new RegExp(`${PRODUCT_NAME} ${words.join(' ')}(?: |$)`);
  const lines: string[] = [];
  let inside = false;
  for (const line of usageLines()) {
    // A command's line, then the lines that continue it (indented further, naming no command).
    if (line.includes(`${PRODUCT_NAME} `)) inside = start.test(line);
    if (inside) lines.push(line);
  }
  return `Usage:\n${lines.join('\n')}\n\nRun "${PRODUCT_NAME} --help" for what every command does, the options and the settings.\n`;
}

/** Refuses a command or subcommand that USAGE does not name, with the one it may have meant. */
function checkCommandWords([command, sub]: string[]): void {
  if (command === undefined || command.startsWith('-')) return;
  const subs = COMMANDS.get(command);
  if (!subs)
    throw new UsageError(`Unknown command "${command}".${didYouMean(command, [...COMMANDS.keys()])} Run with --help to see the commands.`);
  if (subs.length === 0 || sub === undefined || sub.startsWith('-') || subs.includes(sub)) return;
  const meant = didYouMean(sub, subs);
  if (meant) throw new UsageError(`"${command}" has no command "${sub}".${meant} It has: ${subs.join(', ')}.`);
}

/** ` Did you mean "X"?` for the one choice within a typo or two of `word` (or that it starts), else ''. */
export function didYouMean(word: string, choices: string[]): string {
  const near = choices.filter((choice) => editDistance(word, choice) <= Math.max(1, Math.floor(choice.length / 4)));
  const started = word.length >= 3 ? choices.filter((choice) => choice.startsWith(word)) : [];
  const [meant, other] = near.length > 0 ? near : started;
  return meant !== undefined && other === undefined ? ` Did you mean "${meant}"?` : '';
}

/** The fewest inserted, deleted or changed characters, or swapped neighbours, from a to b. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** `--help` or `-h` anywhere before `--`: the help on the command words that come before any option. */
function helpRequest(argv: string[]): Command | undefined {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  if (args[0] !== 'help' && !args.includes('--help') && !args.includes('-h')) return undefined;
  const words = args[0] === 'help' ? args.slice(1) : args;
  const firstOption = words.findIndex((arg) => arg.startsWith('-'));
  return { kind: 'help', topic: firstOption === -1 ? words : words.slice(0, firstOption) };
}

export function parseCommand(argv: string[]): Command {
  const help = helpRequest(argv);
  if (help) return help;
  checkCommandWords(argv);
  if (argv[0] === 'open') {
    noPositionals(parse(argv.slice(1), {}).positionals, 'open');
    return { kind: 'open' };
  }
  if (argv[0] === 'status') {
    const { values, positionals } = parse(argv.slice(1), JSON_FLAG);
    noPositionals(positionals, 'status');
    return { kind: 'status', json: values.json ?? false };
  }
  if (argv[0] === 'completion') {
    const { positionals } = parse(argv.slice(1), {});
    const shell = positionals[0];
    if (positionals.length !== 1 || !(SHELLS as readonly string[]).includes(shell!))
      throw new UsageError(
        `completion needs one shell: ${SHELLS.join(', ')}. For example, in ~/.bashrc: source <(${PRODUCT_NAME} completion bash)`,
      );
    return { kind: 'completion', shell: shell as Shell };
  }
  if (argv[0] === 'uninstall') {
    const { values, positionals } = parse(argv.slice(1), { yes: { type: 'boolean' } });
    noPositionals(positionals, 'uninstall');
    return { kind: 'uninstall', yes: values.yes ?? false };
  }
  if (argv[0] === 'config') {
    // The serve flags (whose values config shows), and --json.
    const args = argv.slice(1);
    const flags = parseServeFlags(args.filter((arg) => arg !== '--json'));
    if (flags.kind !== 'serve') return flags;
    return { kind: 'config', flags: flags.flags, json: args.includes('--json') };
  }
  if (argv[0] === 'token') return parseToken(argv.slice(1));
  if (argv[0] === 'approve' || argv[0] === 'deny') return parseAnswer(argv[0], argv.slice(1));
  if (argv[0] === 'clients') return parseClients(argv.slice(1));
  if (argv[0] === 'connections') return parseConnections(argv.slice(1));
  if (argv[0] === 'secrets') return parseSecrets(argv.slice(1));
  if (argv[0] === 'places') return parsePlaces(argv.slice(1));
  return parseServeFlags(argv);
}

function parseServeFlags(argv: string[]): Command {
  const { values, positionals } = parse(argv, {
    port: { type: 'string' },
    'control-port': { type: 'string' },
    host: { type: 'string' },
    'no-auth': { type: 'boolean' },
    'client-metadata-url': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
  });
  if (values.help) return { kind: 'help', topic: [] };
  if (values.version) return { kind: 'version' };
  if (positionals.length > 0) throw new UsageError(`Unknown command "${positionals[0]}". Run with --help to see the commands.`);
  const flags: ServeFlags = {};
  if (values.port !== undefined) flags.port = portNumber(values.port, '--port');
  if (values['control-port'] !== undefined) flags.controlPort = portNumber(values['control-port'], '--control-port');
  if (values.host !== undefined) {
    if (!values.host.trim()) throw new UsageError('--host needs an address, for example 127.0.0.1 or 0.0.0.0.');
    flags.host = values.host.trim();
  }
  if (values['no-auth']) flags.auth = false;
  if (values['client-metadata-url'] !== undefined) flags.clientMetadataUrl = values['client-metadata-url'];
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
      if (!values.name)
        throw new UsageError('token create needs --name NAME, a label to tell the token apart later, for example --name ci-agent.');
      return { kind: 'token-create', name: values.name, expires: values.expires, workspacePath: values['workspace-path'] };
    }
    case 'list': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      noPositionals(positionals, 'token list');
      return { kind: 'token-list', json: values.json ?? false };
    }
    case 'tool-search': {
      const { values, positionals } = parse(rest, JSON_FLAG);
      if (positionals.length < 1 || positionals.length > 2)
        throw new UsageError('token tool-search needs a token ID ("token list" shows them) and optionally on, off or auto.');
      return {
        kind: 'token-tool-search',
        id: positionals[0]!,
        ...(positionals[1] !== undefined && { mode: positionals[1] }),
        json: values.json ?? false,
      };
    }
    case 'revoke': {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError('token revoke needs exactly one token ID; "token list" shows them.');
      return { kind: 'token-revoke', id: positionals[0]! };
    }
    default:
      throw new UsageError(`"token" needs one of: create, list, revoke, tool-search${action ? ` (got "${action}")` : ''}.`);
  }
}

function parseAnswer(verb: 'approve' | 'deny', argv: string[]): Command {
  // deny takes the same options, so that a mistaken --workspace-path is told off rather than unknown.
  const { values, positionals } = parse(argv, { json: { type: 'boolean' }, ...PLACE });
  if (positionals.length > 1) throw new UsageError(`${verb} takes one code, the one the client's browser shows (like ABCD-EFGH).`);
  const code = positionals[0];
  if (code === undefined) {
    if (verb === 'deny') throw new UsageError('deny needs the code of the sign-in to refuse; "approve" lists them.');
    if (values['workspace-path'] !== undefined)
      throw new UsageError('--workspace-path goes with a code: approve CODE --workspace-path PATH.');
    return { kind: 'approve-list', json: values.json === true };
  }
  if (values.json) throw new UsageError('--json goes with the list: approve --json.');
  if (verb === 'deny') {
    if (values['workspace-path'] !== undefined) throw new UsageError('deny takes no place: it refuses the sign-in.');
    return { kind: 'deny', code };
  }
  const workspacePath = values['workspace-path'];
  return { kind: 'approve', code, ...(typeof workspacePath === 'string' && { workspacePath }) };
}

function parseClients(argv: string[]): Command {
  const [action, ...rest] = argv;
  switch (action) {
    case 'list': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      noPositionals(positionals, 'clients list');
      return { kind: 'clients-list', json: values.json ?? false };
    }
    case 'revoke': {
      const { positionals } = parse(rest, {});
      if (positionals.length !== 1) throw new UsageError('clients revoke needs exactly one client ID; "clients list" shows them.');
      return { kind: 'clients-revoke', id: positionals[0]! };
    }
    case 'connect': {
      const { values, positionals } = parse(rest, {
        ...PLACE,
        oauth: { type: 'boolean' },
        project: { type: 'boolean' },
        name: { type: 'string' },
        replace: { type: 'boolean' },
      });
      const client = positionals[0];
      if (positionals.length !== 1 || !(CLIENTS as readonly string[]).includes(client!))
        throw new UsageError(`clients connect needs one client: ${CLIENTS.join(', ')}.`);
      return {
        kind: 'clients-connect',
        client: client as ClientId,
        workspacePath: values['workspace-path'] ?? '',
        auth: values.oauth ? 'oauth' : 'token',
        scope: values.project ? 'project' : 'user',
        ...(values.name && { name: values.name }),
        replace: values.replace ?? false,
      };
    }
    default:
      throw new UsageError(`"clients" needs one of: list, revoke, connect${action ? ` (got "${action}")` : ''}.`);
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

function portNumber(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new UsageError(`${flag} ${value} is not a port number. Use a whole number from 0 to 65535.`);
  }
  return Number(value);
}

const PLACE = { 'workspace-path': { type: 'string' } } as const;
/** What each command that lists or shows takes, to print it as JSON. */
const JSON_FLAG = { json: { type: 'boolean' } } as const;

function parseConnections(argv: string[]): Command {
  const [action, ...rest] = argv;
  switch (action) {
    case 'list': {
      const { values, positionals } = parse(rest, { ...PLACE, json: { type: 'boolean' } });
      noPositionals(positionals, 'connections list');
      return { kind: 'connections-list', workspacePath: values['workspace-path'] ?? '', json: values.json ?? false };
    }
    case 'add': {
      const { values, positionals } = parse(rest, {
        ...PLACE,
        catalog: { type: 'string' },
        secret: { type: 'string' },
        url: { type: 'string' },
        name: { type: 'string' },
        transport: { type: 'string' },
        header: { type: 'string' },
        prefix: { type: 'string' },
        command: { type: 'string' },
        env: { type: 'string', multiple: true },
        host: { type: 'string', multiple: true },
      });
      const workspacePath = values['workspace-path'] ?? '';
      if ([values.catalog, values.url, values.command].filter(Boolean).length > 1)
        throw new UsageError('connections add takes one of --catalog ID, --url URL or --command PROGRAM.');
      if (values.command) {
        if (values.header || values.transport || values.prefix || values.secret)
          throw new UsageError(
            '--header, --prefix, --secret and --transport go with --url; a local server takes its secrets with --env VAR=SECRET.',
          );
        const env: Record<string, string> = {};
        for (const pair of values.env ?? []) {
          const at = pair.indexOf('=');
          if (at <= 0 || at === pair.length - 1)
            throw new UsageError(`--env ${pair}: write VAR=SECRET, the variable and the name of the place secret that holds its value.`);
          env[pair.slice(0, at)] = pair.slice(at + 1);
        }
        return {
          kind: 'connections-add',
          workspacePath,
          local: {
            command: values.command,
            args: positionals,
            env,
            ...(values.host && { hosts: values.host }),
            ...(values.name && { name: values.name }),
          },
        };
      }
      noPositionals(positionals, 'connections add');
      if (values.env || values.host) throw new UsageError('--env and --host go with --command (a local server).');
      if (values.catalog) {
        if (values.header || values.name || values.transport || values.prefix)
          throw new UsageError('--name, --transport, --header and --prefix go with --url, not --catalog.');
        return { kind: 'connections-add', workspacePath, catalog: values.catalog, ...(values.secret && { secret: values.secret }) };
      }
      if (!values.url)
        throw new UsageError('connections add needs --catalog ID (a connector of the catalog) or --url URL (a server that is not listed).');
      if (values.transport && values.transport !== 'sse' && values.transport !== 'streamable-http')
        throw new UsageError('--transport is streamable-http (default) or sse.');
      if (Boolean(values.header) !== Boolean(values.secret))
        throw new UsageError('--header and --secret go together: the header is sent with the value of the place secret.');
      return {
        kind: 'connections-add',
        workspacePath,
        server: {
          url: values.url,
          ...(values.name && { name: values.name }),
          ...(values.transport && { transport: values.transport as 'sse' | 'streamable-http' }),
          ...(values.header &&
            values.secret && { header: { name: values.header, secret: values.secret, ...(values.prefix && { prefix: values.prefix }) } }),
        },
      };
    }
    case 'import': {
      const { values, positionals } = parse(rest, { ...PLACE, json: { type: 'boolean' }, all: { type: 'boolean' } });
      if (values.all && positionals.length)
        throw new UsageError('connections import takes --all or the IDs of the servers to add, not both.');
      return {
        kind: 'connections-import',
        workspacePath: values['workspace-path'] ?? '',
        items: positionals,
        all: values.all ?? false,
        json: values.json ?? false,
      };
    }
    case 'remove': {
      const { values, positionals } = parse(rest, { ...PLACE, owner: { type: 'string' } });
      if (positionals.length !== 1)
        throw new UsageError('connections remove needs exactly one connection name; "connections list" shows them.');
      return {
        kind: 'connections-remove',
        workspacePath: values['workspace-path'] ?? '',
        name: positionals[0]!,
        ...(values.owner && { owner: values.owner }),
      };
    }
    case 'test': {
      const { values, positionals } = parse(rest, { ...PLACE, owner: { type: 'string' } });
      if (positionals.length !== 1)
        throw new UsageError('connections test needs exactly one connection name; "connections list" shows them.');
      return {
        kind: 'connections-test',
        workspacePath: values['workspace-path'] ?? '',
        name: positionals[0]!,
        ...(values.owner && { owner: values.owner }),
      };
    }
    case 'show': {
      const { values, positionals } = parse(rest, { ...PLACE, owner: { type: 'string' }, json: { type: 'boolean' } });
      if (positionals.length !== 1)
        throw new UsageError('connections show needs exactly one connection name; "connections list" shows them.');
      return {
        kind: 'connections-show',
        workspacePath: values['workspace-path'] ?? '',
        name: positionals[0]!,
        json: values.json ?? false,
        ...(values.owner && { owner: values.owner }),
      };
    }
    case 'edit': {
      const { values, positionals } = parse(rest, {
        ...PLACE,
        owner: { type: 'string' },
        name: { type: 'string' },
        url: { type: 'string' },
        transport: { type: 'string' },
        header: { type: 'string' },
        prefix: { type: 'string' },
        secret: { type: 'string' },
        'no-header': { type: 'boolean' },
        'client-id': { type: 'string' },
        'client-secret-stdin': { type: 'boolean' },
        'no-own-app': { type: 'boolean' },
        'client-credentials': { type: 'string' },
        'private-key-stdin': { type: 'boolean' },
        'signing-algorithm': { type: 'string' },
        'no-client-credentials': { type: 'boolean' },
        'tool-on': { type: 'string', multiple: true },
        'tool-off': { type: 'string', multiple: true },
      });
      if (positionals.length !== 1)
        throw new UsageError('connections edit needs exactly one connection name; "connections list" shows them.');
      if (values.transport && values.transport !== 'sse' && values.transport !== 'streamable-http')
        throw new UsageError('--transport is streamable-http or sse.');
      if (Boolean(values.header) !== Boolean(values.secret))
        throw new UsageError('--header and --secret go together: the header is sent with the value of the place secret.');
      if (values.header && values['no-header']) throw new UsageError('--no-header removes the header; it does not go with --header.');
      if (values['client-id'] !== undefined && values['no-own-app'])
        throw new UsageError('--no-own-app stops using your own OAuth app; it does not go with --client-id.');
      const machine = values['client-credentials'];
      if (machine !== undefined && (values['client-id'] !== undefined || values['no-own-app'] || values['no-client-credentials'])) {
        throw new UsageError(
          '--client-credentials sets a machine login; it does not go with --client-id, --no-own-app or --no-client-credentials.',
        );
      }
      if (values['client-id'] !== undefined && values['no-client-credentials'])
        throw new UsageError('--client-id sets your own OAuth app; say --no-client-credentials alone to go back to the browser.');
      if (values['client-secret-stdin'] && values['client-id'] === undefined && machine === undefined) {
        throw new UsageError('--client-secret-stdin goes with --client-id or --client-credentials: the secret belongs to that client.');
      }
      if (machine !== undefined && Boolean(values['client-secret-stdin']) === Boolean(values['private-key-stdin'])) {
        throw new UsageError(
          '--client-credentials needs exactly one of --client-secret-stdin or --private-key-stdin: the client proves itself with a secret or with a private key.',
        );
      }
      if (values['private-key-stdin'] && machine === undefined)
        throw new UsageError('--private-key-stdin goes with --client-credentials: the key belongs to that client.');
      if (values['signing-algorithm'] !== undefined && !values['private-key-stdin'])
        throw new UsageError('--signing-algorithm goes with --private-key-stdin: it is how the key signs.');
      const algorithm = values['signing-algorithm'] === undefined ? undefined : jwtAlgorithm.safeParse(values['signing-algorithm']);
      if (algorithm && !algorithm.success) throw new UsageError(`--signing-algorithm is one of ${JWT_ALGORITHMS.join(', ')}.`);
      const tools: Record<string, boolean> = {};
      for (const tool of values['tool-on'] ?? []) tools[tool] = true;
      for (const tool of values['tool-off'] ?? []) tools[tool] = false;
      const edit = {
        ...(values.name !== undefined && { name: values.name }),
        ...(values.url !== undefined && { url: values.url }),
        ...(values.transport && { transport: values.transport as 'sse' | 'streamable-http' }),
        ...(values.header &&
          values.secret && { header: { name: values.header, secret: values.secret, ...(values.prefix && { prefix: values.prefix }) } }),
        ...(values['no-header'] && { header: null }),
        ...(values['client-id'] !== undefined && { own_app: { client_id: values['client-id'] } }),
        ...(values['no-own-app'] && { own_app: null }),
        ...(values['no-client-credentials'] && { client_credentials: null }),
        ...(Object.keys(tools).length && { tools }),
      };
      if (Object.keys(edit).length === 0 && machine === undefined) {
        throw new UsageError(
          'connections edit needs something to change: --name, --url, --transport, --header with --secret, --no-header, --tool-on, --tool-off, --client-id, --no-own-app, --client-credentials or --no-client-credentials.',
        );
      }

      return {
        kind: 'connections-edit',
        workspacePath: values['workspace-path'] ?? '',
        name: positionals[0]!,
        edit,
        clientSecretFromStdin: values['client-secret-stdin'] ?? false,
        ...(machine !== undefined && {
          credentials: {
            clientId: machine,
            ...(values['private-key-stdin'] && { privateKeyFromStdin: { ...(algorithm?.data && { algorithm: algorithm.data }) } }),
          },
        }),
        ...(values.owner && { owner: values.owner }),
      };
    }
    default:
      throw new UsageError(`"connections" needs one of: list, add, import, remove, test, show, edit${action ? ` (got "${action}")` : ''}.`);
  }
}

function parseSecrets(argv: string[]): Command {
  const [action, ...rest] = argv;
  // --replace is for set only; list and remove refuse it as an unknown option.
  const { values, positionals } = parse(
    rest,
    action === 'set' ? { ...PLACE, replace: { type: 'boolean' as const } } : action === 'list' ? { ...PLACE, ...JSON_FLAG } : PLACE,
  );
  const workspacePath = values['workspace-path'] ?? '';
  switch (action) {
    case 'list':
      noPositionals(positionals, 'secrets list');
      return { kind: 'secrets-list', workspacePath, json: 'json' in values && values.json === true };
    case 'set':
    case 'remove':
      if (positionals.length !== 1)
        throw new UsageError(`secrets ${action} needs exactly one secret name${action === 'set' ? '; the value is read from stdin' : ''}.`);
      if (action === 'set')
        return { kind: 'secrets-set', workspacePath, name: positionals[0]!, replace: 'replace' in values && values.replace === true };
      return { kind: 'secrets-remove', workspacePath, name: positionals[0]! };
    default:
      throw new UsageError(`"secrets" needs one of: list, set, remove${action ? ` (got "${action}")` : ''}.`);
  }
}

function parsePlaces(argv: string[]): Command {
  const [action, ...rest] = argv;
  // Every places command shows what it changed, or the place as it is: --json prints that as JSON.
  const { values, positionals } = parse(
    rest,
    action === 'policy' ? { ...JSON_FLAG, folder: { type: 'string', multiple: true } } : JSON_FLAG,
  );
  const json = values.json ?? false;
  if (action === 'tool-search') {
    if (positionals.length < 1 || positionals.length > 2)
      throw new UsageError(
        'places tool-search needs a PLACE (for example Crew/alpha, or . for This machine) and optionally on, off or auto.',
      );
    return { kind: 'places-tool-search', place: positionals[0]!, ...(positionals[1] !== undefined && { mode: positionals[1] }), json };
  }
  if (action === 'network') {
    const [place, ...hosts] = positionals;
    if (place === undefined)
      throw new UsageError(
        'places network needs a PLACE (for example Crew/alpha, or . for This machine) and optionally off or the hosts its commands may reach.',
      );
    if (hosts.includes('off') && hosts.length > 1)
      throw new UsageError('places network PLACE off turns the list off: give off alone, or only hosts.');
    return { kind: 'places-network', place, ...(hosts.length > 0 && { hosts: hosts[0] === 'off' ? [] : hosts }), json };
  }
  if (action === 'limits') {
    const [place, ...settings] = positionals;
    if (place === undefined)
      throw new UsageError(
        'places limits needs a PLACE (for example Crew/alpha, or . for This machine) and optionally processes=N, memory=SIZE, tmp=SIZE or default.',
      );
    if (settings.length === 0) return { kind: 'places-limits', place, json };
    if (settings.includes('default')) {
      if (settings.length > 1)
        throw new UsageError("places limits PLACE default sets every limit back to the machine's default: give default alone.");
      return { kind: 'places-limits', place, limits: { processes: undefined, memoryMb: undefined, tmpMb: undefined }, json };
    }
    return { kind: 'places-limits', place, limits: Object.fromEntries(settings.map(parseLimit)), json };
  }
  if (action === 'seal' || action === 'unseal') {
    const [place, ...paths] = positionals;
    if (place === undefined || (action === 'unseal' && paths.length === 0)) {
      throw new UsageError(
        `places ${action} needs a PLACE (for example Crew/alpha, or . for This machine)${action === 'unseal' ? ' and the credential stores (by name, such as ~/.ssh) or sealed paths to lift' : ' and optionally paths to seal'}.`,
      );
    }
    return { kind: 'places-seal', place, unseal: action === 'unseal', paths, json };
  }
  if (action !== 'policy')
    throw new UsageError(`"places" needs: policy, network, seal, unseal, limits or tool-search${action ? ` (got "${action}")` : ''}.`);
  const [place, policy, extra] = positionals;
  if (place === undefined || extra !== undefined) {
    throw new UsageError(
      'places policy needs a PLACE (for example Crew/alpha, or . for This machine) and optionally machine, place or strict.',
    );
  }
  const folders = 'folder' in values && Array.isArray(values.folder) ? values.folder.map(String) : [];
  if (policy === undefined && folders.length > 0)
    throw new UsageError('--folder goes with a policy: places policy PLACE place --folder DIR.');
  return { kind: 'places-policy', place, ...(policy !== undefined && { policy }), folders, json };
}

/** `processes=N`, `memory=SIZE`, `tmp=SIZE` (MiB, or with M or G), or `NAME=default`. */
function parseLimit(setting: string): ['processes' | 'memoryMb' | 'tmpMb', number | undefined] {
  const match = /^(processes|memory|tmp)=(.+)$/.exec(setting);
  if (!match)
    throw new UsageError(
      `"${setting}" is not a limit: write processes=N, memory=SIZE or tmp=SIZE (SIZE in MiB, or like 512M or 4G), or NAME=default.`,
    );
  const [, name, value] = match as unknown as [string, 'processes' | 'memory' | 'tmp', string];
  const key = name === 'processes' ? 'processes' : name === 'memory' ? 'memoryMb' : 'tmpMb';
  if (value === 'default') return [key, undefined];
  const size = name === 'processes' ? /^(\d+)()$/.exec(value) : /^(\d+)([MG]?)$/i.exec(value);
  if (!size)
    throw new UsageError(
      `${name}=${value}: ${name === 'processes' ? 'give a whole number' : 'give a size in MiB, or like 512M or 4G'}, or default.`,
    );
  return [key, Number(size[1]) * (size[2]?.toUpperCase() === 'G' ? 1024 : 1)];
}
