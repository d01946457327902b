import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../test/support/host-fixture.js';
import { repeatUntil, runCliAll, startRaceHost, type CliRun, type RaceHost } from './race-support.js';

// The server adds connections through its API while the CLI adds, removes and edits others in the
// same attachments.json: each change is made under the lock both take, on a fresh read, so neither
// side's change is lost (nor a removed connection brought back).

/** Connections the CLI adds, removes and edits, two runs at a time; without the lock most are lost. */
const PER_KIND = 8;

type Listed = { name: string; displayName: string };

describe('connections changed by the CLI while the server adds others', () => {
  let race: RaceHost;
  const api: RaceHost['api'] = (method, path, body) => race.api(method, path, body);
  /** A loopback port nothing listens on: every connection is added, and found unreachable, at once. */
  let port: number;

  before(async () => {
    race = await startRaceHost('pw-connections-race-', { WORKSPACE_ALLOW_PRIVATE_NETWORK: '1' });
    port = await freePort();
  });
  after(() => race.close());

  async function add(place: string, id: string): Promise<string> {
    const answer = await api('POST', `/mcp/place?workspace_path=${place}`, {
      server: { url: `http://127.0.0.1:${port}/${id}/mcp`, name: id },
    });
    assert.equal(answer.status, 201, answer.text);
    return answer.json.connection.name;
  }

  async function displayNames(place: string): Promise<string[]> {
    const answer = await api('GET', `/mcp/place?workspace_path=${place}`);
    assert.equal(answer.status, 200, answer.text);
    return answer.json.connections.map((c: Listed) => c.displayName).sort();
  }

  it(`loses none of ${3 * PER_KIND} CLI changes, nor any connection the API added meanwhile`, async () => {
    const ids = Array.from({ length: PER_KIND }, (_, i) => i);
    const doomed: string[] = [];
    const renamed: string[] = [];
    for (const i of ids) doomed.push(await add('Crew/gone', `g${i}`));
    for (const i of ids) renamed.push(await add('Crew/renamed', `r${i}`));
    const runs: CliRun[] = ids.flatMap((i) => [
      { args: ['connections', 'add', '--workspace-path', 'Crew/cli', '--url', `http://127.0.0.1:${port}/c${i}/mcp`, '--name', `c${i}`] },
      { args: ['connections', 'remove', doomed[i]!, '--workspace-path', 'Crew/gone'] },
      { args: ['connections', 'edit', renamed[i]!, '--workspace-path', 'Crew/renamed', '--name', `renamed r${i}`] },
    ]);

    const cli = runCliAll(runs, race.env);
    // The API adds one connection, and every other time removes it again (a removal lost to an older read would bring it back).
    const added = await repeatUntil(
      cli,
      async (n) => {
        const name = await add('Crew/api', `a${n}`);
        if (n % 2 === 0) return;
        const removed = await api('DELETE', `/mcp/place/${name}?workspace_path=Crew/api`);
        assert.equal(removed.status, 200, `What was added just before was lost: ${removed.text}`);
      },
      3,
    );
    await cli;
    assert.ok(added > 20, `the API added only ${added} connections during the race`);

    const missing = (expected: string[], actual: string[]) => expected.filter((name) => !actual.includes(name));
    const lost = {
      addedByCli: missing(
        ids.map((i) => `c${i}`),
        await displayNames('Crew/cli'),
      ),
      removedByCliButListed: await displayNames('Crew/gone'),
      renamedByCli: missing(
        ids.map((i) => `renamed r${i}`),
        await displayNames('Crew/renamed'),
      ),
      addedByApi: missing(
        Array.from({ length: added }, (_, n) => `a${n}`).filter((_, n) => n % 2 === 0),
        await displayNames('Crew/api'),
      ),
      removedByApiButListed: (await displayNames('Crew/api')).filter((name) => Number(name.slice(1)) % 2 === 1),
    };
    assert.deepEqual(lost, { addedByCli: [], removedByCliButListed: [], renamedByCli: [], addedByApi: [], removedByApiButListed: [] });
  });
});
