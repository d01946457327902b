import { userInfo } from 'node:os';

export type MachineErrorCode =
  | 'not_found'
  | 'is_directory'
  | 'not_a_file'
  | 'permission_denied'
  | 'invalid_input'
  | 'out_of_range'
  | 'too_large'
  | 'not_text'
  | 'edit_failed'
  | 'unknown_skill'
  | 'invalid_skill'
  | 'bash_unavailable'
  | 'tty_unavailable'
  | 'cancelled'
  | 'refused_by_policy'
  | 'sandbox_unavailable'
  | 'io_error';

/** A failure the caller can act on: the message says what failed, why, and what to do next. */
export class MachineError extends Error {
  override readonly name = 'MachineError';

  constructor(
    readonly code: MachineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Turns a Node file-system error about `path` into a MachineError worded for an agent.
 * `action` is the verb of what was attempted ("read", "write", "edit").
 */
export function fileSystemError(error: unknown, path: string, action: string): MachineError {
  if (error instanceof MachineError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const cause = { cause: error };
  switch (code) {
    case 'ENOENT':
      return new MachineError(
        'not_found',
        `Cannot ${action} ${path}: no such file. Relative paths resolve against ${process.cwd()}; list the folder with bash (ls) to find the right name.`,
        cause,
      );
    case 'ENOTDIR':
      return new MachineError('not_found', `Cannot ${action} ${path}: a part of this path is a file, not a folder.`, cause);
    case 'EISDIR':
      return isDirectoryError(path, action);
    case 'EACCES':
    case 'EPERM':
      return new MachineError(
        'permission_denied',
        `Cannot ${action} ${path}: permission denied for user ${currentUser()}. Check its permissions with bash (ls -l) or use a path this user may ${action}.`,
        cause,
      );
    case 'ENOSPC':
      return new MachineError(
        'io_error',
        `Cannot ${action} ${path}: no space left on the device. Free some space (bash: df -h) and try again.`,
        cause,
      );
    case 'EROFS':
      return new MachineError('permission_denied', `Cannot ${action} ${path}: the file system is read-only.`, cause);
    default:
      return new MachineError('io_error', `Cannot ${action} ${path}: ${error instanceof Error ? error.message : String(error)}`, cause);
  }
}

export function isDirectoryError(path: string, action: string): MachineError {
  return new MachineError('is_directory', `Cannot ${action} ${path}: it is a directory, not a file. List it with bash: ls -la '${path}'`);
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    // userInfo() throws when the uid has no passwd entry (common in containers).
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
