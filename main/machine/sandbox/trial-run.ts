import { spawn } from 'node:child_process';

/** How a trial run of a sandbox program went wrong: not installed, not startable, or it failed (`why`: its first line on stderr, or how it ended). */
export type TrialFailure = { kind: 'missing' } | { kind: 'unstartable'; why: string } | { kind: 'failed'; why: string };

/** Runs `program args` once, for the sandbox checks: nothing when it exits 0, else what went wrong. */
export function trialRun(
  program: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<TrialFailure | undefined> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unstartable', why: error.message }),
    );
    child.once('close', (code, signal) =>
      resolve(
        code === 0
          ? undefined
          : { kind: 'failed', why: stderr.trim().split('\n')[0] || (signal ? `signal ${signal}` : `exit code ${code}`) },
      ),
    );
  });
}
