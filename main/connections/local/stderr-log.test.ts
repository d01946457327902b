import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { LOG_FILE_MAX_BYTES, STDERR_BYTES_PER_SECOND, STDERR_LINES_KEPT, StderrLog } from './stderr-log.js';

describe('StderrLog', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pw-stderr-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('keeps the last lines without terminal escapes, and the whole in its file, with secrets replaced by their names', async () => {
    const log = new StderrLog(join(dir, 'a', 'server.log'));
    log.hide([{ name: 'API_KEY', value: 'sk-123456' }]);
    const lines = ['\x1b[31mred\x1b[0m line', 'key is sk-123456 here', ...Array.from({ length: 30 }, (_, i) => `line ${i}`)];
    // Cut in the middle of a line and of the secret: lines are put together before anything is written.
    const text = lines.join('\n') + '\n';
    await pipeline(Readable.from([text.slice(0, 20), text.slice(20)]), log.sink());
    assert.equal(log.recent().length, STDERR_LINES_KEPT);
    assert.equal(log.lastLine(), 'line 29');
    const file = await readFile(log.path, 'utf8');
    assert.match(file, /key is \[secret API_KEY\] here/);
    assert.ok(!file.includes('sk-123456'));
    assert.equal((await stat(log.path)).mode & 0o777, 0o600);
    log.note('Stopping: idle.');
    assert.equal(log.lastLine(), 'line 29', "the app's own notes are not the server's last words");
    log.close();
  });

  it('takes a flood at a bounded rate and keeps its file under the cap', async () => {
    const log = new StderrLog(join(dir, 'flood.log'));
    const line = `${'x'.repeat(1023)}\n`;
    const chunk = line.repeat(64);
    const started = Date.now();
    // Twice the rate: the second half waits for the next second.
    const mb = (2 * STDERR_BYTES_PER_SECOND) / chunk.length;
    await pipeline(Readable.from(Array.from({ length: mb + 1 }, () => chunk)), log.sink());
    assert.ok(Date.now() - started >= 900, 'a flood is slowed');
    assert.ok((await stat(log.path)).size <= LOG_FILE_MAX_BYTES);
    log.remove();
    await assert.rejects(stat(log.path));
  });
});
