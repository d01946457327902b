import { readFile as readBytes } from 'node:fs/promises';
import { resolve } from 'node:path';
import { writeFileAtomic } from '../state/atomic-write.js';
import { unifiedDiff } from './diff.js';
import { MachineError, fileSystemError } from './errors.js';
import { existingFile } from './file-target.js';

/** Largest file `edit` loads; bigger files are better changed with bash (sed, patch). */
export const EDIT_MAX_FILE_BYTES = 10 * 1024 * 1024;

export interface TextEdit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export interface EditInput {
  path: string;
  edits: TextEdit[];
}

export interface EditResult {
  /** The file edited: the target of `path` when `path` is a symbolic link. */
  path: string;
  edits: number;
  replacements: number;
  /** Unified-style diff of the change, bounded in length. */
  diff: string;
}

/** Applies every edit in memory first, so a failing edit leaves the file exactly as it was. */
export async function editFile(input: EditInput): Promise<EditResult> {
  const requested = resolve(input.path);
  if (!Array.isArray(input.edits) || input.edits.length === 0) {
    throw new MachineError('invalid_input', 'edits is empty: give at least one {old_string, new_string}.');
  }
  let file: Awaited<ReturnType<typeof existingFile>>;
  let bytes: Buffer;
  try {
    file = await existingFile(requested, 'edit');
    if (!file) {
      throw new MachineError('not_found', `Cannot edit ${requested}: no such file. Use write to create it (relative paths resolve against ${process.cwd()}).`);
    }
    if (file.info.size > EDIT_MAX_FILE_BYTES) {
      throw new MachineError(
        'too_large',
        `Cannot edit ${requested}: it is ${file.info.size} bytes, over the ${EDIT_MAX_FILE_BYTES / 1024 / 1024} MiB edit limit. Change it with bash (sed, patch) instead.`,
      );
    }
    bytes = await readBytes(file.path);
  } catch (error) {
    throw fileSystemError(error, requested, 'edit');
  }
  const before = decodeText(bytes, requested);

  // Agents send LF text; in a file whose line breaks are all CRLF it is meant as CRLF, to match and to write.
  const crlf = before.includes('\r\n') && !/(?<!\r)\n/.test(before);
  let text = before;
  let replacements = 0;
  input.edits.forEach((edit, index) => {
    const applied = applyEdit(text, edit, { index, total: input.edits.length, path: requested, crlf });
    text = applied.text;
    replacements += applied.count;
  });

  try {
    await writeFileAtomic(file.path, Buffer.from(text, 'utf8'), { mode: file.info.mode & 0o7777 });
  } catch (error) {
    throw fileSystemError(error, requested, 'edit');
  }
  return { path: file.path, edits: input.edits.length, replacements, diff: unifiedDiff(before, text) };
}

function decodeText(bytes: Buffer, path: string): string {
  try {
    if (bytes.includes(0)) throw new Error('NUL byte');
    // ignoreBOM keeps a byte-order mark in the text, so it is written back unchanged.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new MachineError('not_text', `Cannot edit ${path}: it is not a UTF-8 text file. Replace it whole with write (encoding "base64") instead.`);
  }
}

function applyEdit(
  text: string,
  edit: TextEdit,
  { index, total, path, crlf }: { index: number; total: number; path: string; crlf: boolean },
): { text: string; count: number } {
  const which = `edit ${index + 1} of ${total}`;
  const fail = (why: string): MachineError => new MachineError('edit_failed', `${which} failed: ${why} Nothing was written; ${path} is unchanged.`);
  if (typeof edit.old_string !== 'string' || edit.old_string === '') {
    throw fail('old_string is empty. Give the exact text to replace; to replace the whole file use write.');
  }
  if (typeof edit.new_string !== 'string') throw fail('new_string is missing.');
  if (edit.old_string === edit.new_string) throw fail('old_string and new_string are identical, so there is nothing to change.');

  const from = crlf ? toCrlf(edit.old_string) : edit.old_string;
  const to = crlf ? toCrlf(edit.new_string) : edit.new_string;
  const count = occurrences(text, from);
  if (count === 0) {
    const after = index > 0 ? ` (after applying edits 1-${index})` : '';
    throw fail(
      `old_string was not found in ${path}${after}. It must match the file exactly, including whitespace and indentation; read the file again and copy the text.`,
    );
  }
  if (count > 1 && !edit.replace_all) {
    throw fail(`old_string matches ${count} places in ${path}. Include more surrounding lines to make it unique, or set replace_all: true to replace all ${count}.`);
  }
  // split/join rather than String.replace, whose patterns would interpret "$&" and friends in new_string.
  return { text: text.split(from).join(to), count };
}

function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count += 1;
  return count;
}

function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
