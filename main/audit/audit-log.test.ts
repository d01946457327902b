import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { appendFile, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import { AuditLog, type AuditEntry } from './audit-log.js';

const entry = (overrides: Partial<AuditEntry> = {}): AuditEntry => ({
  tool: 'read',
  caller: 'token:0123456789abcdef',
  durationMs: 12,
  outcome: 'ok',
  ...overrides,
});

async function lines(path: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('AuditLog', () => {
  let stateDir: string;
  let reports: string[];
  let log: AuditLog;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'audit-log-'));
    reports = [];
    log = new AuditLog({ stateDir, report: (message) => reports.push(message) });
  });
  afterEach(async () => {
    await log.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('appends one JSON line per call with the documented fields', async () => {
    const before = Date.now();
    log.record(
      entry({
        tool: 'bash',
        place: '/work/Crew/1',
        policy: 'strict',
        projectId: 'p',
        executionId: 'e',
        workspaceId: 'w',
        durationMs: 41.6,
        outcome: 'error',
        error: 'exit 2',
      }),
    );
    log.record(entry({ outcome: 'cancelled' }));
    await log.flush();
    const [first, second] = await lines(join(stateDir, 'audit.log'));
    const { time, ...rest } = first!;
    assert.ok(Date.parse(time as string) >= before - 1 && (time as string).endsWith('Z'));
    assert.deepEqual(rest, {
      tool: 'bash',
      caller: 'token:0123456789abcdef',
      place: '/work/Crew/1',
      policy: 'strict',
      projectId: 'p',
      executionId: 'e',
      workspaceId: 'w',
      durationMs: 42,
      outcome: 'error',
      error: 'exit 2',
    });
    assert.deepEqual(Object.keys(second!).sort(), ['caller', 'durationMs', 'outcome', 'time', 'tool']);
    if (process.platform !== 'win32') assert.equal((await stat(join(stateDir, 'audit.log'))).mode & 0o777, 0o600);
  });

  it('writes nothing but the record fields, whatever the caller passes', async () => {
    const sneaky = { ...entry(), arguments: { path: '/etc/shadow' }, content: 'file body', token: 'eyJx.eyJy.z' } as AuditEntry;
    log.record(sneaky);
    await log.flush();
    const text = await readFile(join(stateDir, 'audit.log'), 'utf8');
    for (const leaked of ['shadow', 'file body', 'eyJ', 'arguments', 'content']) assert.ok(!text.includes(leaked), leaked);
  });

  it('redacts credentials in error messages, and keeps them short and on one line', async () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl';
    log.record(entry({ outcome: 'error', error: `upstream said 401 for ${jwt}\nAuthorization: Bearer sk_live_abc123, retry` }));
    log.record(entry({ outcome: 'error', error: 'x'.repeat(3000) }));
    await log.flush();
    const [redacted, long] = await lines(join(stateDir, 'audit.log'));
    assert.equal(redacted!.error, 'upstream said 401 for [redacted] Authorization: Bearer [redacted], retry');
    assert.equal((long!.error as string).length, 1000);
  });

  it('returns from record before anything is written, and writes it soon after', async () => {
    const path = join(stateDir, 'audit.log');
    assert.equal(log.record(entry()), undefined);
    await assert.rejects(stat(path), /ENOENT/, 'record() did not wait for the disk');
    await log.flush();
    assert.equal((await lines(path)).length, 1);
  });

  it('keeps records back for the batch time, so that they share one write', async () => {
    const patient = new AuditLog({ stateDir, batchMs: 3_600_000 });
    // File requests made from the audit log's code only: other code in this process does disk work of
    // its own at times.
    let fileRequests = 0;
    const hook = createHook({
      init(_id, type) {
        if (type.startsWith('FSREQ') && /audit-log\.[jt]s:/.test(new Error().stack ?? '')) fileRequests += 1;
      },
    });
    hook.enable();
    try {
      patient.record(entry({ tool: 'a' }));
      await new Promise((resolve) => setImmediate(resolve));
      patient.record(entry({ tool: 'b' }));
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      hook.disable();
    }
    const held = fileRequests;
    hook.enable();
    try {
      await patient.close();
    } finally {
      hook.disable();
    }
    assert.equal(held, 0, 'nothing handed to the disk yet');
    assert.ok(fileRequests > 0, "the count sees the audit log's own writes");
    assert.deepEqual(
      (await lines(join(stateDir, 'audit.log'))).map((r) => r.tool),
      ['a', 'b'],
    );
  });

  it('writes by itself once the batch time is over', async () => {
    const quick = new AuditLog({ stateDir, batchMs: 20 });
    quick.record(entry({ tool: 'a' }));
    await waitFor(
      async () => (await readFile(join(stateDir, 'audit.log'), 'utf8').catch(() => '')).includes('"tool":"a"'),
      10_000,
      'the record to be written',
    );
    await quick.close();
  });

  it('writes at once on flush, and without waiting when 64 KiB are waiting', async () => {
    const patient = new AuditLog({ stateDir, batchMs: 3_600_000 });
    const path = join(stateDir, 'audit.log');
    patient.record(entry({ tool: 'first' }));
    await patient.flush();
    assert.equal((await lines(path)).length, 1);
    for (let i = 0; i < 1000; i++) patient.record(entry({ tool: `t${i}` }));
    await waitFor(async () => (await stat(path)).size >= 64 * 1024, 10_000, '64 KiB to be written');
    await patient.close();
    assert.equal((await lines(path)).length, 1001);
  });

  it('keeps every record of concurrent calls, in the order recorded, when closed right after', async () => {
    const order: string[] = [];
    // Calls that end at different moments: some in the same turn, some while a write is in flight.
    await Promise.all(
      Array.from({ length: 20 }, async (_, call) => {
        for (let i = 0; i < 50; i++) {
          if ((call + i) % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
          else await Promise.resolve();
          const tool = `c${call}-${i}`;
          order.push(tool);
          log.record(entry({ tool }));
        }
      }),
    );
    await log.close();
    assert.deepEqual(
      (await lines(join(stateDir, 'audit.log'))).map((r) => r.tool),
      order,
    );
    assert.deepEqual(reports, []);
  });

  it('drops records beyond 4 MiB waiting for the disk, says so once, and keeps the first ones in order', async () => {
    // All recorded in one turn: none can be written before the turn ends.
    const count = 60_000;
    for (let i = 0; i < count; i++) log.record(entry({ tool: `t${i}` }));
    await log.flush();
    const written = (await lines(join(stateDir, 'audit.log'))).map((r) => r.tool);
    assert.ok(written.length > 0 && written.length < count, `${written.length} written`);
    assert.ok((await stat(join(stateDir, 'audit.log'))).size <= 4 * 1024 * 1024);
    assert.deepEqual(
      written,
      Array.from({ length: written.length }, (_, i) => `t${i}`),
    );
    assert.equal(reports.length, 1);
    assert.match(reports[0]!, /cannot keep up/);
  });

  it('reports a write failure once to its reporter and never throws into the caller', async () => {
    const blocked = join(stateDir, 'not-a-dir');
    await writeFile(blocked, '');
    const broken = new AuditLog({ stateDir: blocked, report: (message) => reports.push(message) });
    for (let i = 0; i < 5; i++) {
      broken.record(entry());
      await broken.flush();
    }
    assert.equal(reports.length, 1);
    assert.match(reports[0]!, /could not write the audit log .*not-a-dir.*tool calls go on unrecorded/);
    await broken.close();
  });

  it('reports a new problem once writing has recovered', async () => {
    const dir = join(stateDir, 'later');
    await writeFile(dir, '');
    const flaky = new AuditLog({ stateDir: dir, report: (message) => reports.push(message) });
    flaky.record(entry());
    await flaky.flush();
    await rm(dir);
    flaky.record(entry());
    await flaky.flush();
    assert.equal((await lines(join(dir, 'audit.log'))).length, 1);
    await flaky.close();
    assert.equal(reports.length, 1);
    flaky.record(entry());
    assert.equal(reports.length, 2);
    assert.match(reports[1]!, /already closed/);
  });

  it('flushes on close and records nothing after it', async () => {
    log.record(entry({ tool: 'write' }));
    await log.close();
    log.record(entry({ tool: 'late' }));
    await log.flush();
    const written = await lines(join(stateDir, 'audit.log'));
    assert.deepEqual(
      written.map((r) => r.tool),
      ['write'],
    );
    assert.equal(reports.length, 1);
  });

  it('rotates to audit.log.1 past the size limit', async () => {
    const small = new AuditLog({ stateDir, maxBytes: 1000 });
    for (let i = 0; i < 30; i++) {
      small.record(entry({ tool: `t${i}` }));
      await small.flush();
    }
    await small.close();
    const current = join(stateDir, 'audit.log');
    assert.ok((await stat(current)).size <= 1000);
    assert.ok((await stat(`${current}.1`)).size <= 1000);
    const kept = [...(await lines(`${current}.1`)), ...(await lines(current))].map((r) => r.tool);
    assert.deepEqual(
      kept,
      Array.from({ length: kept.length }, (_, i) => `t${30 - kept.length + i}`),
      'the newest records, in order',
    );
  });

  it('reads the last n records, oldest first', async () => {
    for (let i = 0; i < 10; i++) log.record(entry({ tool: `t${i}` }));
    assert.deepEqual(
      (await log.readRecent(3)).map((r) => r.tool),
      ['t7', 't8', 't9'],
      'including records not yet flushed',
    );
    assert.equal((await log.readRecent(50)).length, 10);
    assert.deepEqual(await log.readRecent(0), []);
  });

  it('reads across chunk boundaries and multi-byte characters', async () => {
    for (let i = 0; i < 3000; i++) log.record(entry({ tool: `t${i}`, place: `/home/zoë/ünïcode/${'é'.repeat(i % 50)}` }));
    const recent = await log.readRecent(2500);
    assert.equal(recent.length, 2500);
    assert.deepEqual(
      recent.map((r) => r.tool),
      Array.from({ length: 2500 }, (_, i) => `t${500 + i}`),
    );
    assert.equal(recent.at(-1)!.place, `/home/zoë/ünïcode/${'é'.repeat(2999 % 50)}`);
  });

  it('continues into audit.log.1 when the current file has too few', async () => {
    const small = new AuditLog({ stateDir, maxBytes: 1000 });
    for (let i = 0; i < 12; i++) {
      small.record(entry({ tool: `t${i}` }));
      await small.flush();
    }
    const recent = await small.readRecent(8);
    await small.close();
    assert.deepEqual(
      recent.map((r) => r.tool),
      ['t4', 't5', 't6', 't7', 't8', 't9', 't10', 't11'],
    );
  });

  it('skips lines that are not records, such as a torn last write', async () => {
    log.record(entry({ tool: 'a' }));
    log.record(entry({ tool: 'b' }));
    await log.flush();
    await appendFile(join(stateDir, 'audit.log'), '{"time":"2024-01-01T00:00:00.000Z","tool":"c","cal');
    assert.deepEqual(
      (await log.readRecent(5)).map((r) => r.tool),
      ['a', 'b'],
    );
  });

  it('reads from the end without loading the whole file', async () => {
    // A 3 GiB sparse file: reading it whole would fail (too large for one buffer) or take long.
    const path = join(stateDir, 'audit.log');
    await writeFile(path, '');
    await truncate(path, 3 * 1024 ** 3);
    await appendFile(
      path,
      '\n' + JSON.stringify({ time: new Date().toISOString(), tool: 'last', caller: 'c', durationMs: 1, outcome: 'ok' }) + '\n',
    );
    const started = Date.now();
    assert.deepEqual(
      (await new AuditLog({ stateDir }).readRecent(1)).map((r) => r.tool),
      ['last'],
    );
    assert.ok(Date.now() - started < 1000);
  });

  it('returns nothing when there is no log yet', async () => {
    assert.deepEqual(await log.readRecent(10), []);
  });
});
