import { otherPlacesFolders, policyOf, type AccessDirectory, type AccessDirectorySnapshot } from '../places/access-directory.js';
import type { Place } from '../places/place-root.js';
import type { SandboxPolicy } from '../places/sandbox-policy.js';
import { endedByChange } from '../places/policy-watch.js';
import { sandboxProblem } from '../machine/sandbox/sandbox-check.js';
import { PlaceSandbox, sandboxMissing, type SandboxHost } from '../machine/sandbox/place-sandbox.js';

/**
 * The sandbox policy of one session's place, read afresh on every call (the owner may change it).
 * Given the call (its request's `extra`), the directory is read once for all that call asks: its
 * audit record names the policy its tool ran under, and one call costs one look at the file.
 */
export class PlacePolicy {
  private readonly reads = new WeakMap<object, Promise<AccessDirectorySnapshot>>();

  constructor(
    private readonly place: Place,
    private readonly access: AccessDirectory,
    private readonly host: SandboxHost,
  ) {}

  async current(call?: object): Promise<SandboxPolicy> {
    return policyOf(await this.snapshotFor(call), this.place);
  }

  /**
   * The sandbox this call runs in; nothing under `machine`. A place or strict place on a machine
   * without a sandbox is refused, never run unsandboxed.
   */
  async sandbox(call?: object): Promise<PlaceSandbox | undefined> {
    return (await this.forCommand(call)).sandbox;
  }

  /**
   * The sandbox of a command, and the check it makes once it is registered with the runner: the
   * policy may have changed while it started, before the policy watch could find it to end it.
   */
  async forCommand(call?: object): Promise<CommandPolicy> {
    for (let dir = await this.snapshotFor(call); ; dir = await this.access.snapshot()) {
      // What ran under the policy before this one ends first, never the sandbox this call is about to use.
      const changed = this.host.caughtUp ? await this.host.caughtUp(dir, this.place.root) : () => undefined;
      if (!changed) continue; // changed again meanwhile: the newer policy holds
      const outdated = (): string | undefined => {
        const change = changed();
        return change && endedByChange(change);
      };
      const policy = policyOf(dir, this.place);
      if (policy.kind === 'machine') return { outdated };
      const problem = await sandboxProblem(this.host.env);
      if (problem) throw sandboxMissing(`${this.place.label} has the ${policy.kind} policy, but ${problem}`);
      // Without the folder (it cannot be made), outputs come back through pipes, none saved.
      const outputs = this.host.outputsOf ? await this.host.outputsOf(this.place.root).catch(() => undefined) : undefined;
      const sandbox = PlaceSandbox.open({ ...policy, kind: policy.kind }, this.place.label, this.place.root, this.host, {
        otherPlaceFolders: otherPlacesFolders(dir, this.place),
        ...(outputs !== undefined && { outputs }),
      });
      return { sandbox, outdated };
    }
  }

  /** The directory as `call` sees it (read on its first ask), or as it is now when no call is given. */
  private snapshotFor(call: object | undefined): Promise<AccessDirectorySnapshot> {
    if (!call) return this.access.snapshot();
    let read = this.reads.get(call);
    if (!read) this.reads.set(call, (read = this.access.snapshot()));
    return read;
  }
}

/** What a command runs in under its place's policy, and why it may no longer run (once registered). */
export interface CommandPolicy {
  sandbox?: PlaceSandbox;
  outdated: () => string | undefined;
}
