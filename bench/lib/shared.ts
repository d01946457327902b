/** What the baseline server's one tool is called and answers; the bench checks the answer. */
export const BASELINE_TOOL = 'fixed';
export const BASELINE_TEXT = 'hello from the bare SDK server';

/** The raw JSON-RPC floor's one tool (bench/floor-server.ts): it answers TEXT_1K. */
export const FLOOR_TOOL = 'fixed1k';

/** The 1 KiB text file the `read` benchmark reads: 16 lines of 64 bytes. */
export const TEXT_1K = Array.from({ length: 16 }, (_, i) => `line ${String(i + 1).padStart(2, '0')} `.padEnd(63, 'abcdefgh') + '\n').join(
  '',
);

/** The gateway benchmark: the place whose connection is called, the API key header, the echo text. */
export const BENCH_PLACE = 'Crew/bench';
export const KEY_HEADER = 'X-Api-Key';
export const ECHO_TEXT = 'hello from the gateway bench';

/**
 * Our host's environment in a benchmark: its own state, working and temp folders (the bash tool's
 * saved output goes to the OS temp dir, so it lands there too), the secret store in a file (a
 * headless box has no keychain, and the bench must not touch the user's), and no registry: the
 * host would otherwise fetch the official MCP Registry at startup, and the bench talks to loopback only.
 */
export function hostEnv(dirs: { state: string; work: string; tmp: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    WORKSPACE_STATE_DIR: dirs.state,
    WORKSPACE_CWD: dirs.work,
    TMPDIR: dirs.tmp,
    WORKSPACE_SECRET_STORE: 'file',
    WORKSPACE_REGISTRY_URL: '',
    ...extra,
  };
}
