import assert from 'node:assert/strict';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { describe, it } from 'node:test';
import { PinnedAddresses } from './pinned-lookup.js';

function lookup(
  pins: PinnedAddresses,
  hostname: string,
  options: LookupOptions,
): Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }> {
  return new Promise((resolve) => pins.lookup(hostname, options, (error, address, family) => resolve({ error, address, family })));
}

describe('PinnedAddresses', () => {
  const pinned = () => {
    const pins = new PinnedAddresses();
    pins.pin('api.example', [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    return pins;
  };

  it('answers with every pinned address when asked for all (as net does when it races families)', async () => {
    const { error, address } = await lookup(pinned(), 'api.example', { all: true });
    assert.equal(error, null);
    assert.deepEqual(address, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  it('answers with the first pinned address otherwise, and honours a requested family', async () => {
    assert.deepEqual(await lookup(pinned(), 'api.example', {}), { error: null, address: '93.184.216.34', family: 4 });
    assert.deepEqual(await lookup(pinned(), 'api.example', { family: 6 }), {
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
    assert.deepEqual(await lookup(pinned(), 'api.example', { family: 'IPv4', all: true }), {
      error: null,
      address: [{ address: '93.184.216.34', family: 4 }],
      family: undefined,
    });
  });

  it('fails a name that was never checked instead of asking DNS', async () => {
    const { error } = await lookup(pinned(), 'other.example', { all: true });
    assert.equal(error?.code, 'ENOTFOUND');
    assert.match(error!.message, /other\.example has no checked address/);
  });

  it('forgets every pin when cleared', async () => {
    const pins = pinned();
    pins.clear();
    assert.equal((await lookup(pins, 'api.example', {})).error?.code, 'ENOTFOUND');
  });

  it('answers asynchronously, as dns.lookup does', () => {
    let answered = false;
    pinned().lookup('api.example', {}, () => {
      answered = true;
    });
    assert.equal(answered, false);
  });
});
