import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { startHost, type HostFixture } from '../../test/support/host-fixture.js';
import { callApi } from '../../test/support/control-api.js';

describe("the page API: a place's sandbox policy", () => {
  let fx: HostFixture;
  let controlUrl: string;
  let adminToken: string;
  const api = (method: string, path: string, body?: unknown, token = adminToken) => callApi(controlUrl, token, method, path, body);

  before(async () => {
    fx = await startHost({}, { WORKSPACE_JWT_SECRET: 'policy-test-secret' });
    controlUrl = await fx.host.open();
    adminToken = await fx.host.adminToken();
  });
  after(() => fx.close());
  /** A policy as the owner set it, without what the machine makes of it (the limits in effect: their own test). */
  /** The policy as stored, without what the server adds (the limits in effect, the credential stores). */
  const stated = (policy: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(policy).filter(([name]) => name !== 'limitsInEffect' && name !== 'credentialStores'));

  it('shows machine by default on the place header, and the owner changes it', async () => {
    assert.deepEqual(stated((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.policy), { kind: 'machine', folders: [] });

    const set = await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha/runs/1', policy: 'strict', folders: ['/srv/shared/'] });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(stated(set.json.policy), { kind: 'strict', folders: ['/srv/shared'] });
    assert.deepEqual(stated((await api('GET', '/mcp/place?workspace_path=Crew/alpha')).json.policy), {
      kind: 'strict',
      folders: ['/srv/shared'],
    });
    assert.deepEqual((await api('GET', '/access')).json.places['Crew/alpha'], { policy: { kind: 'strict', folders: ['/srv/shared'] } });

    assert.equal((await api('PUT', '/places/policy', { workspace_path: 'Crew/alpha', policy: 'machine' })).json.policy.kind, 'machine');
    assert.deepEqual((await api('GET', '/access')).json.places, {});
  });

  it('refuses a bad policy or folder with what to do, and changes nothing', async () => {
    await api('PUT', '/places/policy', { workspace_path: 'Crew/beta', policy: 'place' });
    for (const [body, message] of [
      [{ workspace_path: 'Crew/beta', policy: 'open' }, /"open" is not a policy: use machine, place or strict/],
      [{ workspace_path: 'Crew/beta', policy: 'place', folders: ['relative'] }, /must be an absolute path/],
      [{ workspace_path: 'src/x', policy: 'place' }, /is not in a place/],
    ] as const) {
      const answer = await api('PUT', '/places/policy', body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    assert.deepEqual(stated((await api('GET', '/mcp/place?workspace_path=Crew/beta')).json.policy), { kind: 'place', folders: [] });
  });

  it('keeps a network allow-list beside the policy, normalized; refuses a bad host or the machine policy', async () => {
    await api('PUT', '/places/policy', { workspace_path: 'Crew/gamma', policy: 'strict' });
    const set = await api('PUT', '/places/network', {
      workspace_path: 'Crew/gamma',
      hosts: ['API.example.com.', '*.npmjs.org', 'localhost'],
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(stated(set.json.policy), { kind: 'strict', folders: [], network: ['api.example.com', '*.npmjs.org', 'localhost'] });
    assert.deepEqual((await api('GET', '/mcp/place?workspace_path=Crew/gamma')).json.policy.network, [
      'api.example.com',
      '*.npmjs.org',
      'localhost',
    ]);
    for (const [body, message] of [
      [{ workspace_path: 'Crew/gamma', hosts: ['https://example.com'] }, /is not a host name: write a name/],
      [{ workspace_path: 'Crew/gamma', hosts: 'example.com' }, /hosts/],
      [{ workspace_path: 'Crew/delta', hosts: ['example.com'] }, /machine policy, whose commands reach every host already/],
    ] as const) {
      const answer = await api('PUT', '/places/network', body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    assert.deepEqual(
      stated((await api('PUT', '/places/network', { workspace_path: 'Crew/gamma', hosts: [] })).json.policy),
      { kind: 'strict', folders: [] },
      'an empty list: no network',
    );
  });

  it('seals more paths and lifts credential stores for one place; a lifted name must be a store', async () => {
    await api('PUT', '/places/policy', { workspace_path: 'Crew/gamma', policy: 'place' });
    const set = await api('PUT', '/places/seals', {
      workspace_path: 'Crew/gamma',
      seal: ['/srv/keys/', '~/.config/rclone'],
      unseal: ['~/.aws'],
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(stated(set.json.policy), { kind: 'place', folders: [], seal: ['/srv/keys', '~/.config/rclone'], unseal: ['~/.aws'] });
    const stores = (await api('GET', '/mcp/place?workspace_path=Crew/gamma')).json.policy.credentialStores as Array<{
      name: string;
      lifted: boolean;
    }>;
    assert.deepEqual(
      stores.filter((s) => s.lifted).map((s) => s.name),
      ['~/.aws'],
      'the page is told each store, lifted or sealed',
    );
    assert.ok(stores.some((s) => s.name === '~/.ssh' && !s.lifted));
    for (const [body, message] of [
      [{ workspace_path: 'Crew/gamma', seal: [], unseal: ['~/.bashrc'] }, /"~\/\.bashrc" is not one of the sealed credential stores/],
      [{ workspace_path: 'Crew/gamma', seal: ['relative/path'], unseal: [] }, /must be an absolute path/],
      [{ workspace_path: 'Crew/delta', seal: ['/srv/keys'], unseal: [] }, /machine policy, which reaches everything already/],
    ] as const) {
      const answer = await api('PUT', '/places/seals', body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    // The policy kept its seals when its kind changed.
    assert.deepEqual((await api('PUT', '/places/policy', { workspace_path: 'Crew/gamma', policy: 'strict' })).json.policy.seal, [
      '/srv/keys',
      '~/.config/rclone',
    ]);
  });

  it("sets a place's limits, shows them in effect with the machine's defaults and what this machine enforces; refuses one out of range", async () => {
    await api('PUT', '/places/policy', { workspace_path: 'Crew/limits', policy: 'strict' });
    const before = (await api('GET', '/mcp/place?workspace_path=Crew/limits')).json.policy.limitsInEffect;
    assert.equal(before.processes.value, 4096);
    assert.equal(before.processes.byDefault, true);
    assert.equal(before.tmpMb.value, 2048);
    assert.ok(before.memoryMb.value >= 256);
    const set = await api('PUT', '/places/limits', { workspace_path: 'Crew/limits', processes: 200, tmpMb: 64 });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.json.policy.limits, { processes: 200, tmpMb: 64 });
    const inEffect = set.json.policy.limitsInEffect;
    assert.deepEqual(
      [inEffect.processes.value, inEffect.processes.byDefault, inEffect.tmpMb.value, inEffect.memoryMb.byDefault],
      [200, false, 64, true],
    );
    // Each is enforced, or says why not on this machine; where control groups are used, the answer says where.
    for (const name of ['processes', 'memoryMb', 'tmpMb'])
      assert.ok(inEffect[name].unenforced === undefined || /\w{10}/.test(inEffect[name].unenforced), name);
    if (inEffect.processes.unenforced === undefined)
      assert.ok(inEffect.enforcedBy.groups.length > 0 && /cgroup/.test(inEffect.enforcedBy.how), JSON.stringify(inEffect));
    for (const [body, message] of [
      [{ workspace_path: 'Crew/limits', processes: 3 }, /The processes limit must be a whole number from 16 to/],
      [{ workspace_path: 'Crew/limits', memoryMb: 1.5 }, /The memoryMb limit must be a whole number/],
      [{ workspace_path: 'Crew/limits', cpus: 2 }, /cpus/],
      [{ workspace_path: 'Crew/nolimits', processes: 100 }, /machine policy, whose commands run outside any sandbox/],
    ] as const) {
      const answer = await api('PUT', '/places/limits', body);
      assert.equal(answer.status, 400, answer.text);
      assert.match(answer.json.error.message, message);
    }
    assert.deepEqual(
      (await api('GET', '/mcp/place?workspace_path=Crew/limits')).json.policy.limits,
      { processes: 200, tmpMb: 64 },
      'a refused change changed nothing',
    );
    // Kept when the kind changes, gone with machine.
    assert.deepEqual((await api('PUT', '/places/policy', { workspace_path: 'Crew/limits', policy: 'place' })).json.policy.limits, {
      processes: 200,
      tmpMb: 64,
    });
    assert.deepEqual(
      (await api('PUT', '/places/limits', { workspace_path: 'Crew/limits' })).json.policy.limits,
      undefined,
      'none given: the defaults again',
    );
    assert.equal(
      (await api('PUT', '/places/policy', { workspace_path: 'Crew/limits', policy: 'machine' })).json.policy.limitsInEffect,
      undefined,
      'machine runs commands outside any sandbox: no limits',
    );
  });

  it('lets only the person who runs the app change a policy', async () => {
    const alice = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('policy-test-secret'));
    await api('PUT', '/access/places', { workspace_path: 'Crew/beta', editors: ['alice'] });
    // The page's API is the owner's only: a JWT is refused there, even an editor's.
    const answer = await api('PUT', '/places/policy', { workspace_path: 'Crew/beta', policy: 'machine' }, alice);
    assert.equal(answer.status, 401);
    assert.match(answer.json.error.message, /agent tokens and JWTs work on the MCP endpoint only/);
    const network = await api('PUT', '/places/network', { workspace_path: 'Crew/beta', hosts: ['example.com'] }, alice);
    assert.equal(network.status, 401);
    assert.equal((await api('GET', '/mcp/place?workspace_path=Crew/beta')).json.policy.kind, 'place');
  });
});
