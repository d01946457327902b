import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bubblewrapSizesTmpfs } from './bubblewrap-check.js';

// Whether bubblewrap sizes its temp folders is read from its help: in the program's file when the
// help is there (no program run at start), else by running it with --help. Each case has a PATH of
// its own (the answer is kept per PATH) with a `bwrap` that records each run.

const NEW_HELP =
  '    --tmpfs DEST                 Mount new tmpfs on DEST\n    --size BYTES                 Set size of next argument (only for --tmpfs)\n';
const OLD_HELP = '    --tmpfs DEST                 Mount new tmpfs on DEST\n    --dev DEST                   Mount new dev on DEST\n';

describe('bubblewrapSizesTmpfs', () => {
  let top: string;
  before(async () => {
    top = await mkdtemp(join(tmpdir(), 'pw-bwrap-check-'));
  });
  after(() => rm(top, { recursive: true, force: true }));

  /** A folder for PATH with a `bwrap` script (`body`, after a line that records the run in `ran`). */
  async function fakeBwrap(name: string, body: string): Promise<{ path: string; ran: string }> {
    const dir = join(top, name);
    await mkdir(dir);
    const ran = join(dir, 'ran');
    await writeFile(join(dir, 'bwrap'), `#!/bin/sh\necho "$@" >> '${ran}'\n${body}`);
    await chmod(join(dir, 'bwrap'), 0o755);
    return { path: `${dir}:/usr/bin:/bin`, ran };
  }

  it('finds the option in the program file without running it', async () => {
    const { path, ran } = await fakeBwrap('help-in-file', `cat <<'EOF'\n${NEW_HELP}EOF\n`);
    assert.equal(await bubblewrapSizesTmpfs({ PATH: path }), true);
    assert.equal(existsSync(ran), false, 'bwrap was run');
  });

  it('runs a program whose file does not hold its help (a wrapper) with --help', async () => {
    // The help is made when it runs: the file itself never has the option's line.
    const { path, ran } = await fakeBwrap('wrapper', `printf '    --%s BYTES   Set size\\n' size\n`);
    assert.equal(await bubblewrapSizesTmpfs({ PATH: path }), true);
    assert.equal(existsSync(ran), true, 'bwrap was not run');
  });

  it('answers no for a bubblewrap whose help has no --size', async () => {
    const { path, ran } = await fakeBwrap('old', `cat <<'EOF'\n${OLD_HELP}EOF\n`);
    assert.equal(await bubblewrapSizesTmpfs({ PATH: path }), false);
    assert.equal(existsSync(ran), true, 'bwrap was not run');
  });

  it('runs the program when PATH has an entry that is not absolute', async () => {
    const { path, ran } = await fakeBwrap('relative', `cat <<'EOF'\n${NEW_HELP}EOF\n`);
    assert.equal(await bubblewrapSizesTmpfs({ PATH: `${path}:.` }), true);
    assert.equal(existsSync(ran), true, 'bwrap was not run');
  });

  it('answers no when bubblewrap is not installed', async () => {
    const empty = join(top, 'empty');
    await mkdir(empty);
    assert.equal(await bubblewrapSizesTmpfs({ PATH: empty }), false);
  });

  it("finds the option in this machine's bubblewrap", { skip: !existsSync('/usr/bin/bwrap') && 'no /usr/bin/bwrap' }, async () => {
    assert.equal(await bubblewrapSizesTmpfs({ PATH: '/usr/bin' }), true);
  });
});
