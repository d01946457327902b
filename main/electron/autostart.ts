import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

// Launch at login on Linux: Electron's setLoginItemSettings covers only macOS and Windows, and
// desktops following the XDG autostart spec start every .desktop file in ~/.config/autostart.

export const AUTOSTART_FILE_NAME = 'persona-workspace.desktop';

/** The argument the autostart entry passes, so that a login start stays in the tray. */
export const HIDDEN_ARG = '--hidden';

export function autostartPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const config = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(config, 'autostart', AUTOSTART_FILE_NAME);
}

/**
 * The autostart entry: `command` starts the app (the program, then any arguments), and the entry
 * adds HIDDEN_ARG to it.
 */
export function autostartEntry(command: string[]): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Version=1.0',
    'Name=Persona Workspace',
    'Comment=Lets remote AI agents work on this machine over MCP',
    `Exec=${[...command, HIDDEN_ARG].map(execArg).join(' ')}`,
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

/**
 * Quotes one Exec argument as the Desktop Entry spec asks: inside double quotes, `"`, `` ` ``, `$`
 * and `\` are escaped with a backslash; then, the value being a string, every backslash is doubled
 * again, and a literal `%` (a field code otherwise) is written `%%`.
 */
function execArg(arg: string): string {
  const plain = /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg);
  const quoted = plain ? arg : `"${arg.replace(/["`$\\]/g, (c) => `\\${c}`)}"`;
  return quoted.replace(/\\/g, '\\\\').replace(/%/g, '%%');
}

/** Reads and writes the autostart entry. */
export class LinuxAutostart {
  constructor(
    private readonly path: string,
    private readonly command: string[],
  ) {}

  /** On when the entry exists and is not turned off (Hidden=true or X-GNOME-Autostart-enabled=false). */
  async enabled(): Promise<boolean> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    return !/^Hidden\s*=\s*true\s*$/m.test(text) && !/^X-GNOME-Autostart-enabled\s*=\s*false\s*$/m.test(text);
  }

  async set(enabled: boolean): Promise<void> {
    if (!enabled) {
      await rm(this.path, { force: true });
      return;
    }
    await mkdir(dirname(this.path), { recursive: true });
    // Temp file and rename, so a desktop session reading the folder never sees half an entry.
    const temp = `${this.path}.${process.pid}.tmp`;
    await writeFile(temp, autostartEntry(this.command));
    await rename(temp, this.path);
  }
}
