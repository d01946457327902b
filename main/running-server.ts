import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './state/atomic-write.js';

/**
 * `<stateDir>/control.json`: how a command finds the server running on this state dir (`open`).
 * It holds the control plane's URL and the owner's credential for it, so it is mode 0600 like the
 * secret key beside it, and removed when the server stops.
 */
export const RUNNING_SERVER_FILE = 'control.json';

export interface RunningServer {
  pid: number;
  controlUrl: string;
  adminToken: string;
}

export async function recordRunningServer(stateDir: string, server: RunningServer): Promise<void> {
  await writeFileAtomic(join(stateDir, RUNNING_SERVER_FILE), `${JSON.stringify({ version: 1, ...server })}\n`, { mode: 0o600 });
}

/** Removes the record, only if it is still this process's (another server may have started since). */
export async function forgetRunningServer(stateDir: string): Promise<void> {
  const found = await findRunningServer(stateDir);
  if (found?.pid === process.pid) await unlink(join(stateDir, RUNNING_SERVER_FILE)).catch(() => {});
}

/** The server recorded for this state dir, if its process is still alive. */
export async function findRunningServer(stateDir: string): Promise<RunningServer | undefined> {
  let parsed: Partial<RunningServer> & { version?: number };
  try {
    parsed = JSON.parse(await readFile(join(stateDir, RUNNING_SERVER_FILE), 'utf8')) as typeof parsed;
  } catch {
    return undefined;
  }
  if (parsed.version !== 1 || typeof parsed.pid !== 'number' || typeof parsed.controlUrl !== 'string' || typeof parsed.adminToken !== 'string') return undefined;
  return alive(parsed.pid) ? { pid: parsed.pid, controlUrl: parsed.controlUrl, adminToken: parsed.adminToken } : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
