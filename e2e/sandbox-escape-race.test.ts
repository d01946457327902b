import assert from 'node:assert/strict';
import { lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../test/support/host-fixture.js';
import { startEscapeHost, type EscapeHost } from './sandbox-escape-battery.js';

/*
 * The swap race of issue 23, with real bubblewrap: an agent of Crew/alpha runs, inside its place's
 * sandbox (through bash, as any agent can), a program compiled there with gcc that swaps a folder
 * of its own (holding decoys named like the app's files) with a symbolic link to the app's state
 * dir in a tight loop (renameat2 RENAME_EXCHANGE), while it calls read, write and edit on paths
 * under that folder. Whatever the timing, no call may read a byte of the state dir, write or create
 * anything there, or leave a temp file anywhere.
 */

/**
 * Rounds of each attempt, under each policy: strict, where the issue found it, then place (the
 * same code, fewer rounds: a call costs tens of milliseconds on a loaded machine). Writes of the
 * decoy access.json would, landing in the state dir, give the place the machine policy.
 */
const PLAN = [
  { kind: 'strict', rounds: 1000, accessRounds: 300 },
  { kind: 'place', rounds: 250, accessRounds: 100 },
] as const;

const SWAPPER = String.raw`
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
/* Swaps argv[1] and argv[2] until argv[3] exists; prints how many swaps it made. */
int main(int argc, char **argv) {
  unsigned long swaps = 0;
  while (access(argv[3], F_OK) != 0)
    for (int i = 0; i < 256; i++)
      if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0) swaps++;
  printf("%lu\n", swaps);
  return swaps > 0 ? 0 : 1;
}
`;

interface ToolAnswer {
  isError?: boolean;
  content: Array<{ type: string; text?: string; data?: string }>;
  structuredContent?: { exitCode: number | null; stdout: string; stderr: string };
}

describe('the swap race, as an agent of Crew/alpha with its own program in its sandbox', () => {
  let host: EscapeHost;
  let race: string;
  let key: Buffer;

  before(async () => {
    host = await startEscapeHost('pw-escape-race-');
    race = join(host.targets.alpha, 'race');
    key = readFileSync(join(host.targets.state, 'secrets.key'));
    await mkdir(race);
    await writeFile(join(race, 'swapper.c'), SWAPPER);
    await host.setPolicy('strict');
    const built = await call({ name: 'bash', arguments: { command: 'gcc -O2 -o swapper swapper.c', timeout: 120 } }, 'race');
    assert.equal(built.structuredContent?.exitCode, 0, `gcc in the sandbox: ${JSON.stringify(built.structuredContent)}`);
  });

  after(async () => {
    await host?.close();
  });

  async function call(tool: { name: string; arguments: Record<string, unknown> }, cwd?: string): Promise<ToolAnswer> {
    const args = cwd ? { ...tool.arguments, command: `cd ${cwd} && ${tool.arguments.command as string}` } : tool.arguments;
    return (await host.client.callTool({ name: tool.name, arguments: args }, undefined, { timeout: 600_000 })) as unknown as ToolAnswer;
  }

  /** The state dir's entries (relative paths, recursively), without following links. */
  function stateEntries(): string[] {
    const found: string[] = [];
    const walk = (dir: string, prefix: string): void => {
      for (const name of readdirSync(dir)) {
        found.push(prefix + name);
        if (lstatSync(join(dir, name)).isDirectory()) walk(join(dir, name), `${prefix + name}/`);
      }
    };
    walk(host.targets.state, '');
    return found;
  }

  /** The temp files (`.NAME.<pid>-<hex>.tmp`) left anywhere in the race's folder, the swapped one included. */
  function tempFilesIn(dir: string): string[] {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => /(^|\/)\..*\.tmp$/.test(name));
  }

  /**
   * Runs `rounds` tool calls while the agent's program swaps race/swap (a folder with decoys) and
   * race/swap-link (a link to the state dir). Returns how many rounds `escaped` says got through.
   */
  async function underRace(rounds: number, round: (i: number, swap: string) => Promise<boolean>): Promise<number> {
    const { state } = host.targets;
    const swap = join(race, 'swap');
    await call({ name: 'bash', arguments: { command: `rm -rf swap swap-link stop && mkdir swap && ln -s ${state} swap-link` } }, 'race');
    await writeFile(join(swap, 'secrets.key'), 'decoy key\n');
    await writeFile(join(swap, 'access.json'), readFileSync(join(state, 'access.json')));
    const swapper = call({ name: 'bash', arguments: { command: './swapper swap swap-link stop', timeout: 600 } }, 'race');
    // Running once the link has been where the folder was.
    await waitFor(() => lstatSync(join(race, 'swap-link')).isDirectory(), 30_000, 'the swapper to start');
    let escaped = 0;
    try {
      for (let i = 0; i < rounds; i += 1) if (await round(i, swap)) escaped += 1;
    } finally {
      writeFileSync(join(race, 'stop'), '');
    }
    const ran = await swapper;
    assert.equal(ran.structuredContent?.exitCode, 0, `the swapper ran: ${JSON.stringify(ran.structuredContent)}`);
    assert.ok(Number(ran.structuredContent!.stdout) > rounds, `it kept swapping (${ran.structuredContent!.stdout.trim()} swaps)`);
    return escaped;
  }

  for (const { kind, rounds: ROUNDS, accessRounds: ACCESS_ROUNDS } of PLAN) {
    describe(`under ${kind}`, () => {
      let accessBefore: Buffer;
      let entriesBefore: string[];

      before(async () => {
        await host.setPolicy(kind);
        accessBefore = readFileSync(join(host.targets.state, 'access.json'));
        entriesBefore = stateEntries();
      });

      /** Nothing of the race in the state dir, its key and access.json as they were, no temp file in the place. */
      function assertNothingLeaked(): void {
        const planted = stateEntries().filter((name) => !entriesBefore.includes(name) && /planted|newdir|decoy|\.tmp$/.test(name));
        assert.deepEqual(planted, [], 'nothing written or created in the state dir');
        assert.deepEqual(readFileSync(join(host.targets.state, 'secrets.key')), key, 'the key as it was');
        assert.deepEqual(readFileSync(join(host.targets.state, 'access.json')), accessBefore, 'access.json as it was');
        assert.deepEqual(tempFilesIn(race), [], 'no temp file left in the place');
      }

      /** Whether access.json changed (put back, so that the place stays under its policy for the next rounds). */
      function accessChanged(): boolean {
        const path = join(host.targets.state, 'access.json');
        if (readFileSync(path).equals(accessBefore)) return false;
        writeFileSync(path, accessBefore);
        return true;
      }

      it(`read: ${ROUNDS} rounds, not one byte of the state dir`, async () => {
        let decoys = 0;
        const leaked = await underRace(ROUNDS, async (_i, swap) => {
          const answer = await call({ name: 'read', arguments: { path: join(swap, 'secrets.key') } });
          const text = answer.content.map((c) => c.text ?? c.data ?? '').join('\n');
          const leak = text.includes(key.toString('base64')) || text.includes(key.toString('utf8').trim());
          if (!leak && !answer.isError) {
            assert.equal(answer.content[0]?.text, 'decoy key\n', 'a read that works reads the decoy');
            decoys += 1;
          }
          return leak;
        });
        assert.equal(leaked, 0, `${leaked} of ${ROUNDS} reads returned the state dir's key`);
        // The race was on: some reads found the folder, others the link.
        assert.ok(decoys > 0 && decoys < ROUNDS, `${decoys} of ${ROUNDS} reads read the decoy`);
        assertNothingLeaked();
      });

      it(`write: ${ROUNDS} rounds of a new file, none in the state dir`, async () => {
        const landed = await underRace(ROUNDS, async (i, swap) => {
          await call({ name: 'write', arguments: { path: join(swap, `planted-${i}`), content: 'planted\n' } });
          return lstatSync(join(host.targets.state, `planted-${i}`), { throwIfNoEntry: false }) !== undefined;
        });
        assert.equal(landed, 0, `${landed} of ${ROUNDS} writes landed in the state dir`);
        const inPlace = readdirSync(race, { recursive: true, encoding: 'utf8' }).filter((name) => /(^|\/)planted-\d+$/.test(name)).length;
        assert.ok(inPlace > 0 && inPlace < ROUNDS, `${inPlace} of ${ROUNDS} writes landed in the place's folder`);
        assertNothingLeaked();
      });

      it(`write: a new file's parent folder, ${ROUNDS} rounds, none made in the state dir`, async () => {
        const made = await underRace(ROUNDS, async (i, swap) => {
          await call({ name: 'write', arguments: { path: join(swap, `newdir-${i}`, 'file.txt'), content: 'planted\n' } });
          return lstatSync(join(host.targets.state, `newdir-${i}`), { throwIfNoEntry: false }) !== undefined;
        });
        assert.equal(made, 0, `${made} of ${ROUNDS} parent folders were made in the state dir`);
        assertNothingLeaked();
      });

      it(`edit: ${ROUNDS} rounds on access.json, the state dir's copy untouched`, async () => {
        const policy = `"kind": "${kind}"`;
        assert.ok(accessBefore.toString().includes(policy), `access.json says ${policy}`);
        const edited = await underRace(ROUNDS, async (i, swap) => {
          // Back and forth, so that the decoy keeps matching.
          const [from, to] = i % 2 === 0 ? [policy, '"kind": "machine"'] : ['"kind": "machine"', policy];
          await call({ name: 'edit', arguments: { path: join(swap, 'access.json'), edits: [{ old_string: from, new_string: to }] } });
          return accessChanged();
        });
        assert.equal(edited, 0, `${edited} of ${ROUNDS} edits changed the state dir's access.json`);
        assertNothingLeaked();
      });

      it(`write over access.json: ${ACCESS_ROUNDS} rounds, the place keeps its policy`, async () => {
        const overwritten = await underRace(ACCESS_ROUNDS, async (_i, swap) => {
          await call({ name: 'write', arguments: { path: join(swap, 'access.json'), content: '{"version":1,"people":{},"places":{}}' } });
          return accessChanged();
        });
        assert.equal(overwritten, 0, `${overwritten} of ${ACCESS_ROUNDS} writes replaced the state dir's access.json`);
        assertNothingLeaked();
      });
    });
  }
});
