import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../test/support/wait.js';

// The built bin, with stdout a pipe that its reader drains slowly, as `... | head -c` or a busy
// consumer does: the output must arrive whole before the process exits.

const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const TOKENS = 3000;

describe("the command's output into a slow pipe", () => {
  let stateDir: string;
  before(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'pw-cli-pipe-'));
    const tokens = Array.from({ length: TOKENS }, (_, i) => ({
      id: i.toString(16).padStart(16, '0'),
      name: `agent number ${i} of a large fleet`,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      workspacePath: `Crew/team-${i % 50}`,
    }));
    await writeFile(join(stateDir, 'agent-tokens.json'), JSON.stringify({ version: 1, tokens }, null, 2), { mode: 0o600 });
  });
  after(() => rm(stateDir, { recursive: true, force: true }));

  it("gives `token list --json` whole, far beyond the pipe's buffer", async () => {
    const child = spawn(process.execPath, [CLI, 'token', 'list', '--json'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, WORKSPACE_STATE_DIR: stateDir, WORKSPACE_SECRET_STORE: 'file' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // Nothing is read until the reader's buffer is full: the rest, far more than the pipe holds, has
    // to wait for its reader.
    child.stdout.pause();
    await waitFor(() => child.stdout.readableLength >= child.stdout.readableHighWaterMark, 20_000, "the reader's buffer to fill");
    const chunks: Buffer[] = [];
    for await (const chunk of child.stdout) {
      chunks.push(chunk as Buffer);
      await sleep(1);
    }
    assert.equal(await exited, 0, stderr);
    const text = Buffer.concat(chunks).toString('utf8');
    assert.ok(text.length > 256 * 1024, `only ${text.length} bytes`);
    const list = JSON.parse(text) as Array<{ id: string }>;
    assert.equal(list.length, TOKENS);
    assert.equal(list.at(-1)?.id, (TOKENS - 1).toString(16).padStart(16, '0'));
  });
});
