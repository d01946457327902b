import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../test/support/wait.js';
import { CommandRunner } from './command-runner.js';
import { outputFileName, placeFolderName, SavedOutputs } from './saved-outputs.js';

const DAY = 24 * 60 * 60 * 1000;
const MB = 1024 ** 2;
/** An output id as the runner makes them. */
const ID = '2026-12-02T10-00-00-000Z-0123abcd';

let dir: string;

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
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'saved-outputs-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  it('keeps each server in a folder of its own and each place in one of its own, private, removed when the server stops', async () => {
    const base = join(dir, 'stop');
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const alpha = (await runner.run({ command: big(20_000) }, { place: 'Crew/alpha' })).stdout.fullOutputPath!;
    const beta = (await runner.run({ command: big(20_000) }, { place: 'Crew/beta' })).stdout.fullOutputPath!;
    const server = dirname(dirname(alpha));
    assert.equal(dirname(server), base);
    assert.match(basename(server), new RegExp(`^${process.pid}-[0-9a-f]{8}$`));
    assert.equal(dirname(alpha), join(server, placeFolderName('Crew/alpha')));
    assert.equal(dirname(beta), join(server, placeFolderName('Crew/beta')));
    assert.notEqual(dirname(alpha), dirname(beta));
    assert.equal(await runner.outputFolder('Crew/alpha'), dirname(alpha));
    for (const folder of [server, dirname(alpha), dirname(beta)]) assert.equal((await stat(folder)).mode & 0o777, 0o700, folder);
    assert.equal((await stat(alpha)).mode & 0o777, 0o600);
    assert.deepEqual(await runner.removeSavedOutputs(), []);
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
    assert.deepEqual(
      left.sort(),
      paths
        .slice(2)
        .map((p) => basename(p))
        .sort(),
      'the two newest are kept',
    );
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
    await mkdir(join(gone, placeFolderName('Crew/alpha')), { recursive: true, mode: 0o700 });
    await writeFile(join(gone, placeFolderName('Crew/alpha'), outputFileName(ID, 'stdout')), 'x');
    // A folder of a server still running (this process): only its files past a day go.
    const live = join(base, `${process.pid}-00c0ffee`, placeFolderName(''));
    await mkdir(live, { recursive: true, mode: 0o700 });
    await writeFile(join(live, outputFileName(ID, 'stdout')), 'old');
    await older(join(live, outputFileName(ID, 'stdout')), DAY + 60_000);
    await writeFile(join(live, outputFileName(ID, 'stderr')), 'fresh');

    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const reports: string[] = [];
    runner.startSweeping((line) => reports.push(line));
    runner.stopSweeping();
    await waitFor(async () => !(await readdir(base)).includes(basename(gone)), 10_000, "the dead server's folder to be swept");
    await waitFor(async () => !(await readdir(live)).includes(outputFileName(ID, 'stdout')), 10_000, 'the old file to be swept');
    assert.deepEqual(await readdir(live), [outputFileName(ID, 'stderr')]);
    assert.deepEqual(reports, []);
  });

  it('never follows a link, removes only the files it names, never leaves its folder, and says what it left alone', async () => {
    const base = join(dir, 'planted');
    await mkdir(base, { mode: 0o700 });
    // What the links point at: a state dir and a home folder with day-old files in them.
    const victim = join(dir, 'victim');
    const place = join(victim, placeFolderName(''));
    await mkdir(place, { recursive: true });
    const targets = [join(victim, 'secrets.key'), join(victim, outputFileName(ID, 'stdout')), join(place, outputFileName(ID, 'stdout'))];
    for (const target of targets) {
      await writeFile(target, 'keep me');
      await older(target, 2 * DAY);
    }
    // pid 1 always runs; a dead pid's folder is removed whole; both named as a server's folder would be.
    await symlink(victim, join(base, '1-deadbeef'));
    await symlink(victim, join(base, `${await deadPid()}-0000cafe`));
    // Inside real folders: a place folder that is a link, an output name that is a link, a file of a name never given.
    const dead = join(base, `${await deadPid()}-0badf00d`);
    await mkdir(join(dead, placeFolderName('Crew/alpha')), { recursive: true, mode: 0o700 });
    await symlink(victim, join(dead, placeFolderName('Crew/beta')));
    await symlink(targets[0]!, join(dead, placeFolderName('Crew/alpha'), outputFileName(ID, 'stderr')));
    await writeFile(join(dead, placeFolderName('Crew/alpha'), 'notes.txt'), 'not ours');
    await writeFile(join(dead, placeFolderName('Crew/alpha'), outputFileName(ID, 'stdout')), 'ours');

    const saved = new SavedOutputs({ base, maxTotalBytes: MB });
    const left = await saved.sweep();
    for (const target of targets) assert.equal(await readFile(target, 'utf8'), 'keep me', target);
    assert.equal((await lstat(join(base, '1-deadbeef'))).isSymbolicLink(), true, 'the link itself is left too');
    await assert.rejects(lstat(join(dead, placeFolderName('Crew/alpha'), outputFileName(ID, 'stdout'))), 'its own file went');
    const text = left.join('\n');
    assert.match(text, /1-deadbeef: a link \(left alone\)/);
    assert.match(text, /-0000cafe: a link \(left alone\)/);
    assert.match(text, new RegExp(`${placeFolderName('Crew/beta')}: a link \\(left alone\\)`));
    assert.match(text, new RegExp(`${outputFileName(ID, 'stderr')}: not a regular file \\(left alone\\)`));
    assert.match(text, /notes\.txt: not a name this app gives \(left alone\)/);
    assert.match(text, /-0badf00d: holds files this app did not make \(left alone\)/);

    // A base that is a link is not swept at all.
    const linked = join(dir, 'linked-base');
    await symlink(victim, linked);
    assert.deepEqual(await new SavedOutputs({ base: linked, maxTotalBytes: MB }).sweep(), [
      `${linked}: not a private folder of this user (left alone, with all in it)`,
    ]);
    for (const target of targets) assert.equal(await readFile(target, 'utf8'), 'keep me', target);
  });

  it('sweeps its own files past their age, but not those of a command still running', async () => {
    let now = Date.now();
    const saved = new SavedOutputs({ base: join(dir, 'own'), maxTotalBytes: 10 * MB, now: () => now });
    const own = await saved.dir('');
    await writeFile(join(own, outputFileName(ID, 'stdout')), 'done');
    await writeFile(join(own, outputFileName(ID, 'stderr')), 'still writing');
    now += DAY + 1000;
    await saved.sweep(new Set([join(own, outputFileName(ID, 'stderr'))]));
    assert.deepEqual(await readdir(own), [outputFileName(ID, 'stderr')]);
    await saved.removeOwn();
  });

  it('refuses a default-style base folder that other users can read, and then answers through pipes', async () => {
    const base = join(dir, 'shared');
    await mkdir(base);
    await chmod(base, 0o755);
    const saved = new SavedOutputs({ base, maxTotalBytes: MB });
    await assert.rejects(saved.dir(''), /is not a private folder of this user; remove it/);
    const runner = new CommandRunner({ maxTimeoutSeconds: 60, outputDir: base });
    const result = await runner.run({ command: big(20_000) });
    assert.equal(result.stdout.fullOutputPath, undefined);
    assert.ok(result.stdout.text.endsWith('20000\n'));
    assert.deepEqual(await readdir(base), []);
  });

  it('uses a private folder of this user in the OS temp dir by default', async () => {
    const saved = new SavedOutputs({ maxTotalBytes: MB });
    assert.equal(saved.base, join(tmpdir(), `persona-workspace-output-${process.getuid!()}`));
    const own = await saved.dir('');
    assert.equal(dirname(dirname(own)), saved.base);
    assert.equal((await stat(saved.base)).mode & 0o777, 0o700);
    await saved.removeOwn();
    await assert.rejects(readFile(join(own, 'x')), /ENOENT/);
  });
});
