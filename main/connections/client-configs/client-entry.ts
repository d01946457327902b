import { copyFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createScanner, findNodeAtLocation, parseTree, SyntaxKind, type Node } from 'jsonc-parser';
import { writeFileAtomic } from '../../state/atomic-write.js';
import { CLIENT_NAMES, projectFiles, userFiles, type ClientFile, type ClientId, type Machine } from './client-files.js';
import { ClientConfigError, ClientEntryExistsError } from './client-config-errors.js';
import { parseConfig, readConfigText, valueAt } from './config-file.js';

/** How the client reaches this server: the MCP URL, and a token of this app, or none (it signs in with OAuth). */
export interface ServerEntryInput {
  url: string;
  token?: string;
}

/** What was written, to say so: the file, the entry (its token shown as a placeholder), and the backup. */
export interface WrittenEntry {
  client: ClientId;
  clientName: string;
  file: string;
  name: string;
  /** The entry as written, with `<token>` where the token went. */
  entry: unknown;
  /** The copy of the file as it was, beside it; none when the file was made. */
  backup?: string;
  created: boolean;
  replaced: boolean;
}

const TOKEN_SHOWN = '<token>';

/** The name of this server's entry in a client's configuration, unless the person picks another. */
export const DEFAULT_ENTRY_NAME = 'persona-workspace';

/**
 * This server's entry in each client's own format: Cursor takes a URL (and headers), VS Code and
 * Claude Code an `http` server, Claude Desktop, whose file takes local commands only, the
 * `mcp-remote` bridge run with npx (which signs in with OAuth itself when there is no token).
 */
export function entryFor(client: ClientId, { url, token }: ServerEntryInput): Record<string, unknown> {
  const headers = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
  switch (client) {
    case 'cursor':
      return { url, ...headers };
    case 'vscode':
    case 'claude-code':
      return { type: 'http', url, ...headers };
    case 'claude-desktop': {
      const plainHttp = new URL(url).protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);
      return {
        command: 'npx',
        args: [
          '-y',
          'mcp-remote',
          url,
          ...(plainHttp ? ['--allow-http'] : []),
          ...(token ? ['--header', 'Authorization:${AUTH_HEADER}'] : []),
        ],
        ...(token && { env: { AUTH_HEADER: `Bearer ${token}` } }),
      };
    }
  }
}

/**
 * Writes `entry` as `name` among the file's servers, changing nothing else in it byte for byte (an
 * edit of that one value, in the file's own indentation and line ends), after copying the file as
 * it was to `<file>.bak-<time>` beside it. A file that does not parse is left alone; an entry of
 * that name is replaced only when asked; a link is not written through.
 */
export async function writeServerEntry(
  file: ClientFile,
  name: string,
  entry: Record<string, unknown>,
  options: { replace: boolean; now?: Date },
): Promise<WrittenEntry> {
  const read = await readConfigText(file.path);
  const text = read?.text ?? '{}\n';
  const json = parseConfig(file.path, text);
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new ClientConfigError(`${file.path} does not hold a JSON object; it was left as it is.`);
  const servers = valueAt(json, file.serversAt);
  if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers))) {
    throw new ClientConfigError(`${file.path} has "${file.serversAt.join('.')}" but it is not an object; it was left as it is.`);
  }
  const replaced = valueAt(json, [...file.serversAt, name]) !== undefined;
  if (replaced && !options.replace) {
    throw new ClientEntryExistsError(
      `${CLIENT_NAMES[file.client]} already has a server named "${name}" in ${file.path}; it was left as it is. Replace it, or choose another name.`,
    );
  }
  const next = withValue(text, [...file.serversAt, name], entry);
  let backup: string | undefined;
  if (read) {
    backup = `${file.path}.bak-${(options.now ?? new Date()).toISOString().replace(/[:.]/g, '-')}`;
    // COPYFILE_EXCL: never over an older backup.
    await copyFile(file.path, backup, 1);
  } else {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
  }
  await writeFileAtomic(file.path, next, { mode: read?.mode ?? 0o600 });
  const shown = JSON.parse(
    JSON.stringify(entry)
      .split(tokenOf(entry) ?? '\0')
      .join(TOKEN_SHOWN),
  ) as unknown;
  return {
    client: file.client,
    clientName: CLIENT_NAMES[file.client],
    file: file.path,
    name,
    entry: shown,
    ...(backup && { backup }),
    created: !read,
    replaced,
  };
}

/**
 * `text` with `value` set at `path`, as one edit: the value of an existing key replaced, or a new
 * key added after the last one of the deepest object on the path that exists (with the objects
 * still missing around it), in the file's own indentation and line ends. Unlike a formatter, it
 * touches no other byte: not the sibling before it, not a trailing comma, not a comment.
 */
export function withValue(text: string, path: string[], value: unknown): string {
  const root = parseTree(text, [], { allowTrailingComma: true });
  if (!root || root.type !== 'object') throw new ClientConfigError('The file does not hold a JSON object.');
  // A file on one line stays on one line.
  const compact = !text.trim().includes('\n');
  const unit = compact ? '' : (/^([ \t]+)\S/m.exec(text)?.[1] ?? '  ');
  const eol = compact ? '' : text.includes('\r\n') ? '\r\n' : '\n';
  const pretty = (v: unknown, indent: string) =>
    compact
      ? JSON.stringify(v)
      : JSON.stringify(v, null, unit)
          .split('\n')
          .join(eol + indent);
  const existing = findNodeAtLocation(root, path);
  if (existing) return splice(text, existing.offset, existing.length, pretty(value, lineIndent(text, existing.offset)));
  // The deepest object on the path, and what is still missing below it.
  let depth = path.length - 1;
  let parent: Node | undefined;
  for (; depth > 0; depth -= 1) if ((parent = findNodeAtLocation(root, path.slice(0, depth)))) break;
  parent = depth === 0 ? root : parent!;
  if (parent.type !== 'object') throw new ClientConfigError(`"${path.slice(0, depth).join('.')}" is not an object.`);
  const nested = path.slice(depth + 1).reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
  const last = parent.children?.at(-1);
  const parentIndent = lineIndent(text, parent.offset);
  if (!last) {
    const indent = compact ? '' : parentIndent + unit;
    return splice(
      text,
      parent.offset + 1,
      0,
      `${eol}${indent}${JSON.stringify(path[depth])}: ${pretty(nested, indent)}${eol}${compact ? '' : parentIndent}`,
    );
  }
  const indent = compact ? '' : lineStartsAt(text, last.offset) ? lineIndent(text, last.offset) : parentIndent + unit;
  const property = `${JSON.stringify(path[depth])}: ${pretty(nested, indent)}`;
  // After a trailing comma, if the last property has one (JSONC); else a comma of our own.
  const scanner = createScanner(text, false);
  scanner.setPosition(last.offset + last.length);
  let token = scanner.scan();
  while (
    token === SyntaxKind.Trivia ||
    token === SyntaxKind.LineBreakTrivia ||
    token === SyntaxKind.LineCommentTrivia ||
    token === SyntaxKind.BlockCommentTrivia
  )
    token = scanner.scan();
  if (token === SyntaxKind.CommaToken) return splice(text, scanner.getTokenOffset() + 1, 0, `${eol}${indent}${property},`);
  return splice(text, last.offset + last.length, 0, `,${eol}${indent}${property}`);
}

function splice(text: string, offset: number, length: number, content: string): string {
  return text.slice(0, offset) + content + text.slice(offset + length);
}

/** The whitespace that starts the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** Whether only whitespace comes before `offset` on its line. */
function lineStartsAt(text: string, offset: number): boolean {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*$/.test(text.slice(start, offset));
}

function tokenOf(entry: Record<string, unknown>): string | undefined {
  const text = JSON.stringify(entry);
  return /Bearer ([A-Za-z0-9._~+/=-]+)/.exec(text)?.[1];
}

/** What connecting a client needs: which, where its file is, and how it gets in. */
export interface ConnectClientInput {
  client: ClientId;
  /** The person's own file, or the place folder's. */
  file: ClientFile;
  /** This server's MCP URL. */
  url: string;
  /** The place the client works in ('' is This machine). */
  placeRoot: string;
  auth: 'token' | 'oauth';
  name: string;
  replace: boolean;
  /** Makes a token of this app for the client, bound to the place; revokes it again. */
  tokens: {
    create(input: { name: string; workspacePath?: string }): Promise<{ id: string; name: string; token: string }>;
    revoke(id: string): Promise<unknown>;
  };
}

/**
 * Writes this server into a client's configuration: with a new token bound to the place (the
 * token is revoked again if the file is not written), or the URL naming the place for an OAuth
 * sign-in that the owner then approves.
 */
export async function connectClient(input: ConnectClientInput): Promise<{ written: WrittenEntry; token?: { id: string; name: string } }> {
  const token =
    input.auth === 'token'
      ? await input.tokens.create({
          name: `${CLIENT_NAMES[input.client]} (written to its configuration)`,
          ...(input.placeRoot && { workspacePath: input.placeRoot }),
        })
      : undefined;
  const url = input.auth === 'oauth' && input.placeRoot ? `${input.url}?workspace_path=${encodeURIComponent(input.placeRoot)}` : input.url;
  try {
    const written = await writeServerEntry(input.file, input.name, entryFor(input.client, { url, ...(token && { token: token.token }) }), {
      replace: input.replace,
    });
    return { written, ...(token && { token: { id: token.id, name: token.name } }) };
  } catch (error) {
    if (token) await input.tokens.revoke(token.id).catch(() => {});
    throw error;
  }
}

/** The file of a client this server's entry goes in: the person's, or the place folder's. */
export function entryFileOf(client: ClientId, scope: 'user' | 'project', folder: string, machine: Machine): ClientFile {
  const file = (scope === 'user' ? userFiles(machine) : projectFiles(folder, machine)).find((f) => f.client === client && f.writable);
  if (!file) throw new ClientConfigError(`${CLIENT_NAMES[client]} has no ${scope} configuration file this app writes.`);
  return file;
}
