import type { NetworkMachine, NetworkRules } from './network-decision.js';
import { NetworkProxy } from './network-proxy.js';

/**
 * The loopback ports of the Seatbelt sandboxes' proxies open in this process. Each proxy treats
 * them all as the app's own ports: with `localhost` on a place's list, its command could otherwise
 * ask its proxy for a tunnel to another place's proxy, and reach the network by that place's rules.
 * (On Linux the proxies are Unix sockets in the sealed state dir: no port to reach.)
 */
const openPorts = new Set<number>();

/**
 * macOS has no network namespace to put a bridge in: a sandbox's proxy listens on a loopback port
 * of the host, the only address its Seatbelt profile lets the command connect to. One per call,
 * closed when the command ends.
 */
export class LoopbackProxy {
  private constructor(private readonly proxy: NetworkProxy) {}

  static async open(rules: NetworkRules, machine: NetworkMachine): Promise<LoopbackProxy> {
    const proxy = await NetworkProxy.start({ loopbackPort: 0 }, rules, {
      ...machine,
      appPorts: () => [...machine.appPorts(), ...openPorts],
    });
    openPorts.add(proxy.port);
    return new LoopbackProxy(proxy);
  }

  get port(): number {
    return this.proxy.port;
  }

  async close(): Promise<void> {
    const { port } = this.proxy;
    await this.proxy.close().catch(() => {});
    openPorts.delete(port);
  }
}
