import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { ClientConfigError } from './client-config-errors.js';

/** Larger than any client's configuration (Claude Code's `~/.claude.json` keeps history: a few MB). */
export const MAX_CONFIG_BYTES = 32 * 1024 * 1024;

/** The file's bytes as text and its mode, or undefined when there is no such file. */
export interface ConfigText {
  text: string;
  mode: number;
}

/**
 * Reads a client's configuration file: a regular file, opened without following a link at its
 * last component (a link planted in a place's folder is not read through), at most 32 MB.
 */
export async function readConfigText(path: string): Promise<ConfigText | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP')
      throw new ClientConfigError(`${path} is a symbolic link; this app reads and writes client configurations only at their own paths.`);
    throw new ClientConfigError(`${path} cannot be read (${code ?? (error as Error).message}).`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ClientConfigError(`${path} is not a regular file.`);
    if (info.size > MAX_CONFIG_BYTES)
      throw new ClientConfigError(`${path} is ${info.size} bytes; configurations over ${MAX_CONFIG_BYTES} bytes are not read.`);
    return { text: await handle.readFile('utf8'), mode: info.mode & 0o777 };
  } finally {
    await handle.close();
  }
}

/** The file's JSON (comments and trailing commas allowed, as VS Code writes them), or an error naming where it breaks. */
export function parseConfig(path: string, text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const first = errors[0]!;
    throw new ClientConfigError(
      `${path} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); it was left as it is.`,
    );
  }
  return value;
}

/** The value at `keys` in `json`, if every step is an object. */
export function valueAt(json: unknown, keys: readonly string[]): unknown {
  let node = json;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
