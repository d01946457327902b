import { LiveSandbox, LiveSandboxError, SLEEP } from './live-sandbox.js';
import type { PlaceGroup } from './cgroups.js';
import { SandboxNetwork, type SandboxNetworkSetup } from './network-bridge.js';

/** A sandbox with no command for this long is ended (and with it anything a command left behind). */
export const SANDBOX_IDLE_MS = 60_000;

/**
 * The live sandboxes of the places, one per place. A call whose sandbox arguments differ from the
 * running one's (the owner changed the policy, a folder appeared or was replaced) gets a new
 * sandbox; the old one ends once its commands have.
 */
export class SandboxPool {
  private readonly live = new Map<string, Promise<LiveSandbox>>();
  private readonly all = new Set<LiveSandbox>();
  /** Every running sandbox of each place, the one in use and those retired but still running commands. */
  private readonly byPlace = new Map<string, Set<LiveSandbox>>();
  /** The proxies of sandboxes that ended, being closed. */
  private readonly closing = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly idleMs = SANDBOX_IDLE_MS) {}

  /**
   * The running sandbox of `place` (its root) made from exactly `args` and `env` over the same folders
   * (`identity`) and with the same network rules, started if need be. With `network`, the sandbox
   * gets a proxy of its own (ended with it) and runs the bridge to it as its program. With `group`,
   * the sandbox and every command entered into it are in the place's control group.
   */
  async acquire(
    place: string,
    args: readonly string[],
    env: NodeJS.ProcessEnv,
    identity = '',
    network?: SandboxNetworkSetup,
    group?: PlaceGroup,
  ): Promise<LiveSandbox> {
    if (this.closed) throw new LiveSandboxError('The server is stopping: no new command is started.');
    const fingerprint = JSON.stringify([args, Object.entries(env), identity, network?.rules ?? null]);
    const current = this.live.get(place);
    if (current) {
      const sandbox = await current.catch(() => undefined);
      if (sandbox?.alive && sandbox.fingerprint === fingerprint) return sandbox;
      if (this.live.get(place) === current) {
        this.live.delete(place);
        sandbox?.retire();
      } else {
        return this.acquire(place, args, env, identity, network, group); // another call replaced it meanwhile
      }
    }
    const starting = network
      ? this.startWithNetwork(args, env, fingerprint, network, group)
      : LiveSandbox.start(args, env, fingerprint, this.idleMs, SLEEP, group);
    this.live.set(place, starting);
    try {
      const sandbox = await starting;
      this.all.add(sandbox);
      const ofPlace = this.byPlace.get(place) ?? new Set();
      this.byPlace.set(place, ofPlace.add(sandbox));
      void sandbox.whenEnded.then(() => {
        this.all.delete(sandbox);
        ofPlace.delete(sandbox);
        if (ofPlace.size === 0 && this.byPlace.get(place) === ofPlace) this.byPlace.delete(place);
        if (this.live.get(place) === starting) this.live.delete(place);
      });
      return sandbox;
    } catch (error) {
      if (this.live.get(place) === starting) this.live.delete(place);
      throw error;
    }
  }

  /**
   * Ends every sandbox of `place` now, with everything still running in them (background
   * processes included: their PID namespace goes with the sandbox). Its policy changed; the next
   * command starts a new one.
   */
  async endPlace(place: string): Promise<void> {
    const starting = this.live.get(place);
    this.live.delete(place);
    const started = await starting?.catch(() => undefined);
    await Promise.all([...(this.byPlace.get(place) ?? []), ...(started ? [started] : [])].map((sandbox) => sandbox.stop()));
  }

  /** Ends every sandbox, and the commands still in them (server shutdown). */
  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.live.values()].map((starting) => starting.catch(() => undefined)));
    await Promise.all([...this.all].map((sandbox) => sandbox.stop()));
    await Promise.all([...this.closing]);
  }

  /** A live sandbox whose program is the bridge to a proxy of its own, closed when the sandbox ends. */
  private async startWithNetwork(
    args: readonly string[],
    env: NodeJS.ProcessEnv,
    fingerprint: string,
    setup: SandboxNetworkSetup,
    group: PlaceGroup | undefined,
  ): Promise<LiveSandbox> {
    const network = await SandboxNetwork.open(setup);
    try {
      const sandbox = await LiveSandbox.start(
        [...args, ...network.mountArgs],
        env,
        fingerprint,
        this.idleMs,
        { argv: network.bridge(), comm: SandboxNetwork.bridgeComm, saysReady: true },
        group,
      );
      const closed = sandbox.whenEnded.then(() => network.close());
      this.closing.add(closed);
      void closed.then(() => this.closing.delete(closed));
      return sandbox;
    } catch (error) {
      await network.close();
      throw error;
    }
  }
}
