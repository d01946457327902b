// Shell completion as a shell runs it: the script the built program prints, loaded into a real
// bash (and fish and zsh where installed), asked what it offers for what was typed.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const has = (program: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`]);
    return true;
  } catch {
    return false;
  }
};

let dir: string;
const scripts: Record<string, string> = {};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pw-completion-'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const { stdout } = await run(process.execPath, [CLI, 'completion', shell]);
    scripts[shell] = join(dir, `completion.${shell}`);
    await writeFile(scripts[shell], stdout);
  }
});
after(() => rm(dir, { recursive: true, force: true }));

/** What bash's completion offers for `line` (the cursor at its end), as a TAB would ask it. */
async function bashOffers(line: string): Promise<string[]> {
  const script = `source "$1"
complete -p persona-mcp-workspace
read -ra COMP_WORDS <<< "$2"
[[ $2 == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
COMP_LINE=$2 COMP_POINT=\${#2}
_persona_mcp_workspace persona-mcp-workspace "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run('bash', ['--norc', '--noprofile', '-c', script, 'bash', scripts.bash!, line]);
  const [registered, ...offers] = stdout.split('\n').filter(Boolean);
  assert.equal(registered, 'complete -o default -F _persona_mcp_workspace persona-mcp-workspace');
  return offers;
}

describe('completion bash, in bash', () => {
  it('offers the commands, then the subcommands of the one typed', async () => {
    const commands = await bashOffers('persona-mcp-workspace ');
    for (const command of ['token', 'connections', 'places', 'secrets', 'status', 'completion', 'uninstall', 'help', 'open'])
      assert.ok(commands.includes(command), `${command} among ${commands.join(' ')}`);
    assert.deepEqual(await bashOffers('persona-mcp-workspace to'), ['token']);
    assert.deepEqual(await bashOffers('persona-mcp-workspace token '), ['create', 'list', 'revoke', 'tool-search']);
    assert.deepEqual(await bashOffers('persona-mcp-workspace places un'), ['unseal']);
    assert.deepEqual(await bashOffers('persona-mcp-workspace completion '), ['bash', 'zsh', 'fish']);
    assert.deepEqual(await bashOffers('persona-mcp-workspace help conn'), ['connections']);
  });

  it("offers a command's options, and nothing of its own for an option's value", async () => {
    assert.deepEqual(await bashOffers('persona-mcp-workspace token create --'), [
      '--name',
      '--expires',
      '--workspace-path',
      '--config',
      '--help',
    ]);
    assert.deepEqual(await bashOffers('persona-mcp-workspace secrets list --j'), ['--json']);
    // Options and their values before the command words do not hide them.
    assert.deepEqual(await bashOffers('persona-mcp-workspace --config ./s.json connections list --workspace-path Crew/a --'), [
      '--workspace-path',
      '--json',
      '--config',
      '--help',
    ]);
    // The value of --workspace-path: bash's own file names (complete -o default), not the subcommands.
    assert.deepEqual(await bashOffers('persona-mcp-workspace secrets list --workspace-path '), []);
    assert.deepEqual(await bashOffers('persona-mcp-workspace --p'), ['--port']);
    assert.ok((await bashOffers('persona-mcp-workspace -')).includes('--version'));
    // A choice is offered once: after it, the next word is no longer one.
    assert.deepEqual(await bashOffers('persona-mcp-workspace completion bash '), []);
  });
});

describe('completion fish, in fish', { skip: !has('fish') && 'fish is not installed here' }, () => {
  it('offers the same as bash', async () => {
    const offers = async (line: string) =>
      (await run('fish', ['--no-config', '-c', `source $argv[1]; complete -C $argv[2]`, scripts.fish!, line])).stdout
        .split('\n')
        .filter(Boolean)
        .map((offer) => offer.split('\t')[0]);
    assert.deepEqual(await offers('persona-mcp-workspace token '), ['create', 'list', 'revoke', 'tool-search']);
    assert.deepEqual(await offers('persona-mcp-workspace token create --na'), ['--name']);
    assert.deepEqual(await offers('persona-mcp-workspace completion '), ['bash', 'fish', 'zsh']);
  });
});

describe('completion zsh, in zsh', { skip: !has('zsh') && 'zsh is not installed here' }, () => {
  it('loads after compinit and registers its function', async () => {
    const { stdout } = await run('zsh', [
      '-f',
      '-c',
      'autoload -U compinit && compinit -u -D && source $1 && print -r -- ${_comps[persona-mcp-workspace]}',
      'zsh',
      scripts.zsh!,
    ]);
    assert.equal(stdout.trim(), '_persona_mcp_workspace');
  });
});
