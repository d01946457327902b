import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What bash runs before a sandboxed command (named by BASH_ENV, which bash reads before the
 * command and which leaves its messages and line numbers as they are): it closes every descriptor
 * but stdin, stdout and stderr (a terminal's, with `tty: true`), so a command starts with nothing
 * the app, nsenter or the pseudo-terminal library held open (a pipe the app inherited, the
 * sandbox's namespaces, another command's terminal), and takes BASH_ENV away from what it starts.
 */
export const START_SCRIPT = `# The app's sandbox: only stdin, stdout and stderr stay open for the command.
for __sandbox_fd in /dev/fd/*; do
  __sandbox_fd=\${__sandbox_fd##*/}
  case $__sandbox_fd in 0|1|2) ;; *) eval "exec \${__sandbox_fd}>&-" ;; esac
done
unset __sandbox_fd BASH_ENV
`;

/** Where the script is inside a bubblewrap sandbox: in its own /dev, a tmpfs. */
export const START_SCRIPT_INSIDE = '/dev/sandbox-start.sh';

const written = new Set<string>();

/**
 * The script's file in the state dir (`<stateDir>/sandbox/start.sh`), written once per process (and
 * again if it was changed): bubblewrap binds it read-only into each sandbox, Seatbelt lets commands
 * read that one file of the sealed state dir.
 */
export function startScriptFile(stateDir: string): string {
  const dir = join(stateDir, 'sandbox');
  const file = join(dir, 'start.sh');
  if (written.has(file)) return file;
  const current = (() => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  })();
  if (current !== START_SCRIPT) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, START_SCRIPT, { mode: 0o644 });
    renameSync(temp, file);
  }
  written.add(file);
  return file;
}
