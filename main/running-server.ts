import { mkdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { writeFileAtomic } from './state/atomic-write.js';
import { withFileLock } from './state/file-lock.js';
import { processAlive } from './state/process-alive.js';
import { PRODUCT_NAME } from './version.js';

/**
 * `<stateDir>/control.json`: the one server running on this state dir, and how commands reach it
 * (`open`, and the reading commands, which ask it rather than checking again). It holds the control
 * plane's URL and the owner's credential for it, so it is mode 0600 like the secret key beside it,
 * and removed when the server stops.
 */
export const RUNNING_SERVER_FILE = 'control.json';

/** A server still starting (no URL yet) holds the state dir this long at most. */
const STARTING_MS = 60_000;
/** How long a recorded server has to answer before it is taken for gone. */
const ANSWER_MS = 2_000;

const recordSchema = z.object({
  version: z.literal(1),
  pid: z.number().int(),
  startedAt: z.string(),
  controlUrl: z.string().optional(),
  adminToken: z.string().optional(),
  /** The agent endpoint, while it is open. */
  mcpUrl: z.string().optional(),
  /** How long this server gives a connection's server to answer one request: a command says how long it may wait. */
  upstreamTimeoutMs: z.number().optional(),
});
type Record = z.infer<typeof recordSchema>;

export interface RunningServer {
  pid: number;
  controlUrl: string;
  adminToken: string;
  mcpUrl?: string;
  upstreamTimeoutMs?: number;
}

/** Another server runs on this state dir: a second one would split what every surface shows. */
export class ServerRunningError extends Error {
  override readonly name = 'ServerRunningError';
  constructor(
    readonly stateDir: string,
    readonly found: Pick<Record, 'pid' | 'controlUrl' | 'mcpUrl'>,
  ) {
    const where = [found.controlUrl && `its page at ${found.controlUrl}`, found.mcpUrl && `agents at ${found.mcpUrl}`]
      .filter(Boolean)
      .join(', ');
    super(
      `A ${PRODUCT_NAME} server already runs on the state dir ${stateDir} (pid ${found.pid}${where ? `; ${where}` : ', still starting'}). ` +
        `Use that one ("${PRODUCT_NAME} open" signs a browser in to its page), stop it first, or give this one another state dir (WORKSPACE_STATE_DIR).`,
    );
  }
}

/** Takes the state dir for this process, or refuses (ServerRunningError) while another live server holds it. */
export async function claimStateDir(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await withFileLock(join(stateDir, `${RUNNING_SERVER_FILE}.lock`), async () => {
    const found = await readRecord(stateDir);
    if (found && found.pid !== process.pid && (await holds(found))) throw new ServerRunningError(stateDir, found);
    await write(stateDir, { version: 1, pid: process.pid, startedAt: new Date().toISOString() });
  });
}

/** Records where this process's server is reached, once it listens (and its agent endpoint, while open). */
export async function recordRunningServer(stateDir: string, server: Omit<RunningServer, 'pid'>): Promise<void> {
  const found = await readRecord(stateDir);
  await write(stateDir, {
    version: 1,
    pid: process.pid,
    startedAt: found?.pid === process.pid ? found.startedAt : new Date().toISOString(),
    ...server,
  });
}

/** Removes the record, only if it is still this process's. */
export async function forgetRunningServer(stateDir: string): Promise<void> {
  const found = await readRecord(stateDir);
  if (found?.pid === process.pid) await unlink(join(stateDir, RUNNING_SERVER_FILE)).catch(() => {});
}

/** The server recorded for this state dir, if its process is still alive and it listens. */
export async function findRunningServer(stateDir: string): Promise<RunningServer | undefined> {
  const found = await readRecord(stateDir);
  if (!found?.controlUrl || !found.adminToken || !processAlive(found.pid)) return undefined;
  return {
    pid: found.pid,
    controlUrl: found.controlUrl,
    adminToken: found.adminToken,
    ...(found.mcpUrl && { mcpUrl: found.mcpUrl }),
    ...(found.upstreamTimeoutMs !== undefined && { upstreamTimeoutMs: found.upstreamTimeoutMs }),
  };
}

/**
 * Whether the recorded server still holds the state dir: alive and answering as the server, or
 * still starting. A live pid whose URL refuses the connection, or answers as something else, was
 * reused by another process. One that takes the connection and has not answered within
 * `ANSWER_MS` is taken to be there and busy (a loaded machine): a second server on the same state
 * dir would be worse than a refusal that says which pid to stop.
 */
async function holds(found: Record): Promise<boolean> {
  if (!processAlive(found.pid)) return false;
  if (!found.controlUrl || !found.adminToken) return Date.now() - Date.parse(found.startedAt) < STARTING_MS;
  try {
    const answer = await fetch(`${found.controlUrl}/api/server`, {
      headers: { Authorization: `Bearer ${found.adminToken}` },
      signal: AbortSignal.timeout(ANSWER_MS),
    });
    await answer.body?.cancel();
    return answer.ok;
  } catch (error) {
    return error instanceof Error && error.name === 'TimeoutError';
  }
}

async function readRecord(stateDir: string): Promise<Record | undefined> {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(await readFile(join(stateDir, RUNNING_SERVER_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function write(stateDir: string, record: Record): Promise<void> {
  // What it records lives only as long as this process: after a crash it is stale anyway, so it is not
  // synced to disk (a start writes it three times, at milliseconds each).
  await writeFileAtomic(join(stateDir, RUNNING_SERVER_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600, durable: false });
}
