import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import * as z from 'zod';
import { MAX_ALLOWED_HOSTS } from '../../../common/api/places.js';
import { AllowListError, checkAllowList } from '../../places/network-allow-list.js';

/** A local server's command is not acceptable; the message says why and what to do. */
export class LocalCommandError extends Error {
  override readonly name = 'LocalCommandError';
}

const MAX_ARGS = 100;
const MAX_ARG_LENGTH = 4000;
const MAX_ENV = 50;
// What a process environment can carry portably; a name with `=` or a NUL would split or cut it.
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const NO_NUL = (text: string) => !text.includes('\0');

/**
 * How a local MCP server is run: a program and its arguments (no shell), environment variables
 * whose values are secrets of the place (only their names are stored), and the network hosts it
 * says it needs beyond the place's allow-list (under `strict`, installing a package is one).
 */
export const localCommandSchema = z.object({
  command: z.string().min(1).max(1000).refine(NO_NUL, 'no NUL character'),
  args: z.array(z.string().max(MAX_ARG_LENGTH).refine(NO_NUL, 'no NUL character')).max(MAX_ARGS),
  env: z
    .array(
      z.object({
        name: z.string().regex(ENV_NAME, 'an environment variable name: letters, digits and _, not starting with a digit'),
        secret: z.string().min(1).max(64),
      }),
    )
    .max(MAX_ENV)
    .refine((env) => new Set(env.map((e) => e.name)).size === env.length, 'each variable once'),
  hosts: z.array(z.string()).max(MAX_ALLOWED_HOSTS).optional(),
});

export type LocalCommand = z.infer<typeof localCommandSchema>;

/** A local server as a person gives it, before it is checked. */
export interface LocalCommandInput {
  command: string;
  args?: readonly string[] | undefined;
  /** Variable name → the name of the place secret that holds its value. */
  env?: Readonly<Record<string, string>> | undefined;
  hosts?: readonly string[] | undefined;
}

/** Checks and normalizes a local server's command: what is stored, or an error that says what to fix. */
export function checkLocalCommand(input: LocalCommandInput): LocalCommand {
  const command = input.command.trim();
  if (!command) throw new LocalCommandError('A local server needs a command: a program such as npx, uvx, or the path of an executable.');
  let hosts: string[];
  try {
    hosts = checkAllowList(input.hosts ?? []);
  } catch (error) {
    if (error instanceof AllowListError) throw new LocalCommandError(`The hosts this server needs: ${error.message}`);
    throw error;
  }
  const parsed = localCommandSchema.safeParse({
    command,
    args: [...(input.args ?? [])],
    env: Object.entries(input.env ?? {}).map(([name, secret]) => ({ name, secret })),
    ...(hosts.length > 0 && { hosts }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LocalCommandError(`The local server's ${issue?.path.join('.') || 'command'} is not valid: ${issue?.message ?? 'invalid'}.`);
  }
  return parsed.data;
}

/** The command line as a person reads it (arguments with spaces quoted); never a secret value: those are not in it. */
export function commandLine(local: Pick<LocalCommand, 'command' | 'args'>): string {
  return [local.command, ...local.args]
    .map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : `'${part.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}

/** The package a launcher runs (`npx -y @scope/pkg@1` → `@scope/pkg`), else the program's own name. */
export function programName(local: Pick<LocalCommand, 'command' | 'args'>): string {
  const program = basename(local.command);
  if (/^(npx|uvx|bunx|pnpx)$/.test(program) || (program === 'pnpm' && local.args[0] === 'dlx')) {
    const pkg = local.args.find((arg, i) => !arg.startsWith('-') && !(program === 'pnpm' && i === 0) && !isOptionValue(local.args, i));
    if (pkg) return pkg.replace(/(.)@[^@/]*$/, '$1');
  }
  return program;
}

// `npx --package x y`, `uvx --from x y`: the word after these options is their value, not the package.
function isOptionValue(args: readonly string[], i: number): boolean {
  return i > 0 && /^(-p|--package|--from|--with|--python)$/.test(args[i - 1]!);
}

/**
 * A catalog-shaped id for a local server that is not listed, from the name its adder gave, else the
 * package or program it runs: `npx -y @playwright/mcp` → `local-playwright-mcp`. One too long keeps
 * its start and a hash of the whole command line.
 */
export function localId(local: Pick<LocalCommand, 'command' | 'args'>, name?: string): string {
  const slug = (name?.trim() || programName(local))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const id = `local-${slug || 'server'}`;
  if (id.length <= 32) return id;
  const hash = createHash('sha256')
    .update(JSON.stringify([local.command, local.args]))
    .digest('hex')
    .slice(0, 6);
  return `${id.slice(0, 32 - hash.length - 1).replace(/-$/, '')}-${hash}`;
}
