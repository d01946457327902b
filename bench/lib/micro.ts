import { createHook } from 'node:async_hooks';
import { constants, readFileSync } from 'node:fs';
import { mkdir, open, readFile as fsReadFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { AuditLog } from '../../main/audit/audit-log.js';
import { AgentTokenStore } from '../../main/auth/agent-tokens.js';
import { JwtVerifier } from '../../main/auth/jwt-verifier.js';
import { readFile } from '../../main/machine/read.js';

export interface MicroResult {
  name: string;
  /** Wall time of one operation, awaited one after another, in microseconds (median of batches). */
  wallUs: number;
  /** CPU time (user + system, all threads of this process) of one operation, in microseconds, in that batch. */
  cpuUs: number;
  /** Requests one operation hands to libuv's thread pool (fs calls, getaddrinfo, crypto jobs), counted on one more run. */
  threadPoolOps: number;
}

// async_hooks resource types that are a round trip to the thread pool: fs requests, DNS lookups,
// and crypto jobs (WebCrypto's HMAC is a SIGNREQUEST); not HTTPCLIENTREQUEST, which is no job.
const isThreadPoolType = (type: string): boolean =>
  /^(FSREQ\w*|FILEHANDLECLOSEREQ|GETADDRINFOREQWRAP|GETNAMEINFOREQWRAP|\w+REQUEST)$/.test(type) && type !== 'HTTPCLIENTREQUEST';

/** How many thread-pool requests one run of `op` makes (nothing else runs in this process meanwhile). */
async function threadPoolOpsOf(op: () => Promise<unknown> | unknown): Promise<number> {
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (isThreadPoolType(type)) count += 1;
    },
  });
  hook.enable();
  try {
    await op();
  } finally {
    hook.disable();
  }
  return count;
}

const WARMUP = 1000;
const BATCHES = 7;
const OPS_PER_BATCH = 400;

/**
 * Per-op figures of the median batch (by wall time): a burst of load from elsewhere spoils a batch,
 * not the figure. `scale` shrinks the counts for slow operations (network round trips).
 */
export async function time(name: string, op: () => Promise<unknown> | unknown, scale = 1): Promise<MicroResult> {
  const warmup = Math.ceil(WARMUP * scale);
  const ops = Math.ceil(OPS_PER_BATCH * scale);
  for (let i = 0; i < warmup; i++) await op();
  const batches: Array<{ wallUs: number; cpuUs: number }> = [];
  for (let b = 0; b < BATCHES; b++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < ops; i++) await op();
    const wallUs = ((performance.now() - t0) * 1000) / ops;
    const cpu = process.cpuUsage(cpu0);
    batches.push({ wallUs, cpuUs: (cpu.user + cpu.system) / ops });
  }
  batches.sort((a, b) => a.wallUs - b.wallUs);
  return { name, ...batches[BATCHES >> 1]!, threadPoolOps: await threadPoolOpsOf(op) };
}

/**
 * The per-request pieces of our server, timed in this process one at a time (no HTTP, no MCP):
 * what each adds to a `read` call, against the cheapest ways of doing the same job.
 */
export async function microBench(dir: string, smallFile: string): Promise<MicroResult[]> {
  const stateDir = join(dir, 'micro-state');
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const tokens = new AgentTokenStore({ stateDir });
  const { token, id } = await tokens.create({ name: 'micro', expiresIn: '1d' });
  const verifier = await JwtVerifier.create({ appTokens: tokens });
  const { key } = await tokens.signingKey();
  const audit = new AuditLog({ stateDir });
  const buffer = Buffer.allocUnsafe(8 * 1024);
  try {
    return [
      await time('read tool function, 1 KiB file (main/machine/read.ts readFile)', () => readFile({ path: smallFile })),
      await time('  reference: the 4 thread-pool round trips read used to make (open, fstat, read into 8 KiB, close)', async () => {
        const handle = await open(smallFile, constants.O_RDONLY | constants.O_NONBLOCK);
        await handle.stat();
        await handle.read(buffer, 0, buffer.length, 0);
        await handle.close();
      }),
      await time('  reference: fs.promises.readFile, 1 KiB', () => fsReadFile(smallFile)),
      await time('  reference: fs.readFileSync, 1 KiB', () => readFileSync(smallFile)),
      await time('auth: JwtVerifier.verifyAuthorization (app token, already verified once)', () =>
        verifier.verifyAuthorization(`Bearer ${token}`),
      ),
      await time('  of which AgentTokenStore.status (token file stat: the revocation check)', () => tokens.status(id)),
      await time("  a token's first use only: jose jwtVerify (HS256)", () => jwtVerify(token, key)),
      await time('audit: AuditLog.record + flush', async () => {
        audit.record({ tool: 'read', caller: `token:${id}`, durationMs: 1, outcome: 'ok' });
        await audit.flush();
      }),
    ];
  } finally {
    await audit.close();
  }
}
