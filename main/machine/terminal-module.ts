import { MachineError } from './errors.js';

/** The part of node-pty used here, declared locally so the app builds where node-pty is not installed. */
export interface Terminal {
  readonly pid: number;
  onData(listener: (data: string) => void): unknown;
  onExit(listener: (exit: { exitCode: number; signal?: number }) => void): unknown;
  pause(): void;
  resume(): void;
}

export type SpawnTerminal = (
  file: string,
  args: string[],
  options: { name: string; cols: number; rows: number; cwd: string; env: NodeJS.ProcessEnv },
) => Terminal;

// A variable, not a literal: the type checker must not require the optional module to be installed.
const NODE_PTY = 'node-pty';

let loading: Promise<SpawnTerminal> | undefined;

/**
 * node-pty, loaded on the first `tty: true` command. It is an optional native module: where it
 * could not be built or loaded, only the pseudo-terminal is unavailable, never the server.
 */
export function loadTerminal(): Promise<SpawnTerminal> {
  loading ??= (import(NODE_PTY) as Promise<{ spawn: SpawnTerminal }>).then(
    (module) => module.spawn,
    (error: unknown) => {
      loading = undefined; // a later call tries again (e.g. after a reinstall)
      throw new MachineError(
        'tty_unavailable',
        `tty: true is unavailable on this machine: its pseudo-terminal module (node-pty) could not be loaded (${firstLine(error)}). ` +
          "Run the command without tty (stdout and stderr then come back separately); the machine's owner finds the step that enables it in the server's start lines and in `persona-mcp-workspace status`.",
        { cause: error },
      );
    },
  );
  return loading;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.trim() || 'no reason given';
}
