import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import { CommandRunner } from './command-runner.js';
import { SavedOutputs } from './saved-outputs.js';

const DAY = 24 * 60 * 60 * 1000;
const MB = 1024 ** 2;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'saved-outputs-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A big output: more than head + tail, so the runner saves it to a file. */
const big = (lines: number) => `seq 1 ${lines}`;

/** The pid of a process that has exited (a folder named after it belongs to no running server). */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await once(child, 'exit');
  return child.pid!;
}

async function older(path: string, ms: number): Promise<void> {
  const when = new Date(Date.now() - ms);
  await utimes(path, when, when);
}

describe('saved bash outputs', () => {
  it('keeps each server in a folder of its own, removed when the server stops', async () => {
    const base = join(dir, 'stop');
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const result = await runner.run({ command: big(20_000) });
    const path = result.stdout.fullOutputPath!;
    assert.equal(dirname(dirname(path)), base);
    assert.match(basename(dirname(path)), new RegExp(`^${process.pid}-[0-9a-f]+$`));
    assert.ok((await stat(path)).size > 0);
    await runner.removeSavedOutputs();
    assert.deepEqual(await readdir(base), []);
    // The next command saves again, in a new folder.
    const again = await runner.run({ command: big(20_000) });
    assert.ok((await stat(again.stdout.fullOutputPath!)).size > 0);
    await runner.removeSavedOutputs();
  });

  it('tells the agent how long the file is kept', async () => {
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(dir, 'told'), maxSavedTotalBytes: 300 * MB });
    const before = Date.now();
    const result = await runner.run({ command: big(20_000) });
    const kept = result.stdout.fullOutputKept!;
    const until = Date.parse(/kept until (\S+) at most/.exec(kept)![1]!);
    assert.ok(until >= before + DAY - 1000 && until <= Date.now() + DAY, kept);
    assert.match(kept, /removed a day after it was saved, when this server stops, or sooner once newer saved outputs pass 300 MB/);
    const small = await runner.run({ command: 'echo small' });
    assert.equal(small.stdout.fullOutputKept, undefined, 'nothing saved, nothing to tell');
    await runner.removeSavedOutputs();
  });

  it('removes the oldest files first once the total passes the limit, never the one just saved', async () => {
    // Each output is about 600 KB (seq 1 100000 prints 588,895 bytes); the limit holds two.
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(dir, 'cap'), maxSavedTotalBytes: 1.5 * MB });
    const paths: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const result = await runner.run({ command: big(100_000) });
      paths.push(result.stdout.fullOutputPath!);
      // Distinct ages, as commands run apart would have.
      await older(paths.at(-1)!, (10 - i) * 1000);
    }
    const left = await readdir(dirname(paths[0]!));
    assert.deepEqual(left.sort(), paths.slice(2).map((p) => basename(p)).sort(), 'the two newest are kept');
    let total = 0;
    for (const name of left) total += (await stat(join(dirname(paths[0]!), name))).size;
    assert.ok(total <= 1.5 * MB);
    // One output bigger than the whole limit is still kept: it was just saved for the agent to read.
    const tight = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: join(dir, 'tight'), maxSavedTotalBytes: 100 * 1024 });
    const huge = await tight.run({ command: big(100_000) });
    assert.equal((await stat(huge.stdout.fullOutputPath!)).size, huge.stdout.totalBytes);
    await runner.removeSavedOutputs();
    await tight.removeSavedOutputs();
  });

  it('sweeps the folders of servers that are gone and the files older than a day, at start', async () => {
    const base = join(dir, 'sweep');
    const gone = join(base, `${await deadPid()}-0badc0de`);
    await mkdir(gone, { recursive: true, mode: 0o700 });
    await writeFile(join(gone, 'left-by-a-crash-stdout.log'), 'x');
    // A folder of a server still running (this process): only its files past a day go.
    const live = join(base, `${process.pid}-00c0ffee`);
    await mkdir(live, { mode: 0o700 });
    await writeFile(join(live, 'old-stdout.log'), 'old');
    await older(join(live, 'old-stdout.log'), DAY + 60_000);
    await writeFile(join(live, 'fresh-stdout.log'), 'fresh');

    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const reports: string[] = [];
    runner.startSweeping((line) => reports.push(line));
    runner.stopSweeping();
    await waitFor(async () => !(await readdir(base)).includes(basename(gone)), 10_000, 'the dead server\'s folder to be swept');
    await waitFor(async () => !(await readdir(live)).includes('old-stdout.log'), 10_000, 'the old file to be swept');
    assert.deepEqual(await readdir(live), ['fresh-stdout.log']);
    assert.deepEqual(reports, []);
  });

  it('sweeps its own files past their age, but not those of a command still running', async () => {
    let now = Date.now();
    const saved = new SavedOutputs({ base: join(dir, 'own'), maxTotalBytes: 10 * MB, now: () => now });
    const own = await saved.dir();
    await writeFile(join(own, 'done-stdout.log'), 'done');
    await writeFile(join(own, 'running-stdout.log'), 'still writing');
    now += DAY + 1000;
    await saved.sweep(new Set([join(own, 'running-stdout.log')]));
    assert.deepEqual(await readdir(own), ['running-stdout.log']);
    await saved.removeOwn();
  });

  it('refuses a default-style base folder that other users can read, and then answers through pipes', async () => {
    const base = join(dir, 'shared');
    await mkdir(base);
    await chmod(base, 0o755);
    const saved = new SavedOutputs({ base, maxTotalBytes: MB });
    await assert.rejects(saved.dir(), /is not a private folder of this user; remove it/);
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const result = await runner.run({ command: big(20_000) });
    assert.equal(result.stdout.fullOutputPath, undefined);
    assert.ok(result.stdout.text.endsWith('20000\n'));
    assert.deepEqual(await readdir(base), []);
  });

  it('uses a private folder of this user in the OS temp dir by default', async () => {
    const saved = new SavedOutputs({ maxTotalBytes: MB });
    assert.equal(saved.base, join(tmpdir(), `persona-workspace-output-${process.getuid!()}`));
    const own = await saved.dir();
    assert.equal(dirname(own), saved.base);
    assert.equal((await stat(saved.base)).mode & 0o777, 0o700);
    await saved.removeOwn();
    await assert.rejects(readFile(join(own, 'x')), /ENOENT/);
  });
});
