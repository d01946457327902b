import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { repeatUntil, runCliAll, startRaceHost, type CliRun, type RaceHost } from './race-support.js';

// The server changes places' access entries through its API while the CLI (`places policy`,
// `places network`, `places tool-search`) changes other places' entries in the same access.json:
// each change is made under the lock both take, on a fresh read, so neither side's change is lost.

/** CLI runs, two at a time; without the lock most of them, and many of the API's changes, are lost. */
const CLI_RUNS = 36;

type PlaceAccess = { editors?: string[]; readers?: string[]; policy?: { kind: string; network?: string[] }; toolSearch?: string };

describe('access entries changed by the CLI while the server changes others', () => {
  let race: RaceHost;
  const api: RaceHost['api'] = (method, path, body) => race.api(method, path, body);

  before(async () => {
    race = await startRaceHost('pw-access-race-');
  });
  after(() => race.close());

  /** `following`: the request relies on the change made just before (refused: that change was lost). */
  async function put(path: string, body: unknown, following = false): Promise<void> {
    const answer = await api('PUT', path, body);
    assert.equal(answer.status, 200, `${following ? 'The change made just before was lost: ' : ''}${answer.text}`);
  }

  /** One API change of its own to place `Crew/a<n>` (or person `p<n>`), by turns each route that writes access.json. */
  async function apiChange(n: number): Promise<void> {
    const workspace_path = `Crew/a${n}`;
    switch (n % 6) {
      case 0:
        return put('/places/policy', { workspace_path, policy: 'strict' });
      case 1:
        await put('/places/policy', { workspace_path, policy: 'place' });
        return put('/places/network', { workspace_path, hosts: [`a${n}.example.com`] }, true);
      case 2:
        return put('/access/places/tool-search', { workspace_path, mode: 'on' });
      case 3:
        return put('/access/places', { workspace_path, readers: [`p${n}`] });
      case 4:
        return put(`/access/people/p${n}`, { name: `Person ${n}` });
      default: {
        // A removal lost to an older read would bring the person back.
        await put(`/access/people/p${n}`, { name: `Person ${n}` });
        const removed = await api('DELETE', `/access/people/p${n}`);
        assert.equal(removed.status, 200, `The change made just before was lost: ${removed.text}`);
      }
    }
  }

  /** What `apiChange(n)` leaves in the directory. */
  function apiExpected(
    n: number,
    places: Record<string, PlaceAccess>,
    people: Record<string, { name: string }>,
  ): [string, unknown, unknown] {
    const place = places[`Crew/a${n}`];
    switch (n % 6) {
      case 0:
        return [`Crew/a${n} policy`, place?.policy, { kind: 'strict' }];
      case 1:
        return [`Crew/a${n} network`, place?.policy, { kind: 'place', network: [`a${n}.example.com`] }];
      case 2:
        return [`Crew/a${n} tool search`, place?.toolSearch, 'on'];
      case 3:
        return [`Crew/a${n} readers`, place?.readers, [`p${n}`]];
      case 4:
        return [`person p${n}`, people[`p${n}`], { name: `Person ${n}` }];
      default:
        return [`person p${n} removed`, people[`p${n}`], undefined];
    }
  }

  /** The CLI's change to place `Crew/c<i>`: a policy, a network allow-list (its policy is set first) or tool search. */
  function cliRun(i: number): CliRun {
    const place = `Crew/c${i}`;
    if (i % 3 === 0) return { args: ['places', 'policy', place, 'strict'] };
    if (i % 3 === 1) return { args: ['places', 'network', place, `c${i}.example.com`] };
    return { args: ['places', 'tool-search', place, 'off'] };
  }

  function cliExpected(i: number, places: Record<string, PlaceAccess>): [string, unknown, unknown] {
    const place = places[`Crew/c${i}`];
    if (i % 3 === 0) return [`Crew/c${i} policy`, place?.policy, { kind: 'strict' }];
    if (i % 3 === 1) return [`Crew/c${i} network`, place?.policy, { kind: 'place', network: [`c${i}.example.com`] }];
    return [`Crew/c${i} tool search`, place?.toolSearch, 'off'];
  }

  it(`loses none of ${CLI_RUNS} CLI changes, nor any change the API made meanwhile`, async () => {
    const runs = Array.from({ length: CLI_RUNS }, (_, i) => cliRun(i));
    // A network allow-list needs the place or strict policy: set before the race.
    for (let i = 1; i < CLI_RUNS; i += 3) await put('/places/policy', { workspace_path: `Crew/c${i}`, policy: 'place' });

    const cli = runCliAll(runs, race.env);
    const apiChanges = await repeatUntil(cli, apiChange);
    await cli;
    assert.ok(apiChanges > 50, `the API made only ${apiChanges} changes during the race`);

    const { json } = await api('GET', '/access');
    const { places, people } = json as { places: Record<string, PlaceAccess>; people: Record<string, { name: string }> };
    const lost = [
      ...Array.from({ length: CLI_RUNS }, (_, i) => cliExpected(i, places)),
      ...Array.from({ length: apiChanges }, (_, n) => apiExpected(n, places, people)),
    ].filter(([, actual, expected]) => !isDeepStrictEqual(actual, expected));
    assert.deepEqual(
      lost.map(([what]) => what),
      [],
      `${lost.length} changes lost`,
    );
  });
});
