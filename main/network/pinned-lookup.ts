import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from './target-check.js';

/**
 * The addresses each host name was last checked to have. Sockets look host names up here instead
 * of in DNS, so they connect to an address that passed the check: a second DNS answer (rebinding)
 * can never swap in another one. TLS is unaffected — it still verifies the certificate against
 * the host name.
 */
export class PinnedAddresses {
  private readonly pins = new Map<string, ResolvedAddress[]>();

  pin(hostname: string, addresses: ResolvedAddress[]): void {
    this.pins.set(hostname, addresses);
  }

  clear(): void {
    this.pins.clear();
  }

  /** A `net.connect` lookup. A name that was never checked fails, rather than falling back to DNS. */
  readonly lookup: LookupFunction = (hostname: string, options: LookupOptions, callback) => {
    const family = familyNumber(options.family);
    const addresses = (this.pins.get(hostname) ?? []).filter((a) => family === 0 || a.family === family);
    // Answered asynchronously, as dns.lookup does: net does not expect its callback before connect() returns.
    process.nextTick(() => {
      const first = addresses[0];
      if (!first) {
        const error: NodeJS.ErrnoException = new Error(
          `${hostname} has no checked address to connect to; every URL must go through the guarded fetch.`,
        );
        error.code = 'ENOTFOUND';
        callback(error, '', 0);
      } else if (options.all) {
        callback(
          null,
          addresses.map((a): LookupAddress => ({ address: a.address, family: a.family })),
        );
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}

function familyNumber(family: LookupOptions['family']): number {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
