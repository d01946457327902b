import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, readFile as fsReadFile, stat } from 'node:fs/promises';
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
}

const WARMUP = 1000;
const BATCHES = 7;
const OPS_PER_BATCH = 400;

/** Per-op figures of the median batch (by wall time): a burst of load from elsewhere spoils a batch, not the figure. */
async function time(name: string, op: () => Promise<unknown> | unknown): Promise<MicroResult> {
  for (let i = 0; i < WARMUP; i++) await op();
  const batches: Array<{ wallUs: number; cpuUs: number }> = [];
  for (let b = 0; b < BATCHES; b++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < OPS_PER_BATCH; i++) await op();
    const wallUs = ((performance.now() - t0) * 1000) / OPS_PER_BATCH;
    const cpu = process.cpuUsage(cpu0);
    batches.push({ wallUs, cpuUs: (cpu.user + cpu.system) / OPS_PER_BATCH });
  }
  batches.sort((a, b) => a.wallUs - b.wallUs);
  return { name, ...batches[BATCHES >> 1]! };
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
  const cryptoKey = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const audit = new AuditLog({ stateDir });
  try {
    return [
      await time('read tool function, 1 KiB file (main/machine/read.ts readFile)', () => readFile({ path: smallFile })),
      await time('  its steps: stat (one thread-pool round trip)', () => stat(smallFile)),
      await time('  its steps: open + close', async () => (await open(smallFile, 'r')).close()),
      await time('  its steps: Buffer.allocUnsafe(1 MiB) (its read buffer, per call)', () => Buffer.allocUnsafe(1024 * 1024)),
      await time('  reference: fs.promises.readFile, 1 KiB', () => fsReadFile(smallFile)),
      await time('  reference: fs.readFileSync, 1 KiB', () => readFileSync(smallFile)),
      await time('auth: JwtVerifier.verifyAuthorization (app token)', () => verifier.verifyAuthorization(`Bearer ${token}`)),
      await time('  of which jose jwtVerify with the raw key (imports it each call)', () => jwtVerify(token, key)),
      await time('  of which AgentTokenStore.status (token file stat)', () => tokens.status(id)),
      await time('  reference: jose jwtVerify with a CryptoKey imported once', () => jwtVerify(token, cryptoKey)),
      await time('  reference: node:crypto HMAC-SHA256 check, synchronous', () =>
        timingSafeEqual(createHmac('sha256', key).update(`${header}.${payload}`).digest(), Buffer.from(signature, 'base64url')),
      ),
      await time('audit: AuditLog.record + flush', async () => {
        audit.record({ tool: 'read', caller: `token:${id}`, durationMs: 1, outcome: 'ok' });
        await audit.flush();
      }),
    ];
  } finally {
    await audit.close();
  }
}
