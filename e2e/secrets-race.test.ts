import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EncryptedFileSecretStore } from '../main/secrets/encrypted-file-store.js';
import { PlaceSecrets } from '../main/secrets/place-secrets.js';
import { repeatUntil, runCliAll, startRaceHost, type CliRun, type RaceHost } from './race-support.js';

// The server sets place secrets through its API while the CLI sets, replaces and removes others in
// the same encrypted secrets file (the store of machines without a keychain, one file for every
// secret): each change is made under the lock both take, on a fresh read, so none is lost.

/** Secrets the CLI sets, replaces and removes, two runs at a time; without the lock most are lost. */
const PER_KIND = 15;

describe('place secrets changed by the CLI while the server sets others', () => {
  let race: RaceHost;
  const api: RaceHost['api'] = (method, path, body) => race.api(method, path, body);

  before(async () => {
    race = await startRaceHost('pw-secrets-race-');
  });
  after(() => race.close());

  async function set(place: string, name: string, value: string): Promise<void> {
    const answer = await api('PUT', `/secrets/${name}?workspace_path=${place}`, { value });
    assert.equal(answer.status, 204, answer.text);
  }

  it(`loses none of ${3 * PER_KIND} CLI changes, nor any secret the API set meanwhile`, async () => {
    const ids = Array.from({ length: PER_KIND }, (_, i) => i);
    for (const i of ids) await set('Crew/gone', `G${i}`, `doomed ${i}`);
    for (const i of ids) await set('Crew/replaced', `R${i}`, `old ${i}`);
    const runs: CliRun[] = ids.flatMap((i) => [
      { args: ['secrets', 'set', `C${i}`, '--workspace-path', 'Crew/cli'], stdin: `cli ${i}` },
      { args: ['secrets', 'remove', `G${i}`, '--workspace-path', 'Crew/gone'] },
      { args: ['secrets', 'set', `R${i}`, '--replace', '--workspace-path', 'Crew/replaced'], stdin: `new ${i}` },
    ]);

    const cli = runCliAll(runs, race.env);
    // The API sets one secret, and every other time removes it again (a removal lost to an older read would bring it back).
    const setByApi = await repeatUntil(cli, async (n) => {
      await set('Crew/api', `A${n}`, `api ${n}`);
      if (n % 2 === 0) return;
      const removed = await api('DELETE', `/secrets/A${n}?workspace_path=Crew/api`);
      assert.equal(removed.status, 204, `What was added just before was lost: ${removed.text}`);
    });
    await cli;
    assert.ok(setByApi > 50, `the API set only ${setByApi} secrets during the race`);

    // Read back as a third process would: names from the API, values straight from the file.
    const names = async (place: string): Promise<string[]> => (await api('GET', `/secrets?workspace_path=${place}`)).json.names;
    const file = new PlaceSecrets(new EncryptedFileSecretStore({ stateDir: race.stateDir }), race.stateDir);
    const wrong = async (place: string, expected: Record<string, string>): Promise<string[]> => {
      const listed = await names(place);
      const found = await Promise.all(
        Object.entries(expected).map(async ([name, value]) =>
          listed.includes(name) && (await file.value(place, name)) === value ? [] : [name],
        ),
      );
      return found.flat();
    };
    const lost = {
      setByCli: await wrong('Crew/cli', Object.fromEntries(ids.map((i) => [`C${i}`, `cli ${i}`]))),
      removedByCliButListed: await names('Crew/gone'),
      replacedByCli: await wrong('Crew/replaced', Object.fromEntries(ids.map((i) => [`R${i}`, `new ${i}`]))),
      setByApi: await wrong(
        'Crew/api',
        Object.fromEntries(Array.from({ length: setByApi }, (_, n) => [`A${n}`, `api ${n}`]).filter((_, n) => n % 2 === 0)),
      ),
      removedByApiButListed: (await names('Crew/api')).filter((name) => Number(name.slice(1)) % 2 === 1),
    };
    assert.deepEqual(lost, { setByCli: [], removedByCliButListed: [], replacedByCli: [], setByApi: [], removedByApiButListed: [] });
  });
});
