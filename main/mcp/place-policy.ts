import { otherPlacesFolders, policyOf, type AccessDirectory } from '../places/access-directory.js';
import type { Place } from '../places/place-root.js';
import type { SandboxPolicy } from '../places/sandbox-policy.js';
import { sandboxProblem } from '../machine/sandbox/sandbox-check.js';
import { PlaceSandbox, sandboxMissing, type SandboxHost } from '../machine/sandbox/place-sandbox.js';

/** The sandbox policy of one session's place, read afresh on every call (the owner may change it). */
export class PlacePolicy {
  constructor(
    private readonly place: Place,
    private readonly access: AccessDirectory,
    private readonly host: SandboxHost,
  ) {}

  async current(): Promise<SandboxPolicy> {
    return policyOf(await this.access.snapshot(), this.place);
  }

  /**
   * The sandbox this call runs in; nothing under `machine`. A place or strict place on a machine
   * without a sandbox is refused, never run unsandboxed.
   */
  async sandbox(): Promise<PlaceSandbox | undefined> {
    const dir = await this.access.snapshot();
    // What ran under the policy before this one ends first, never the sandbox this call is about to use.
    await this.host.caughtUp?.(dir);
    const policy = policyOf(dir, this.place);
    if (policy.kind === 'machine') return undefined;
    const problem = await sandboxProblem(this.host.env);
    if (problem) throw sandboxMissing(`${this.place.label} has the ${policy.kind} policy, but ${problem}`);
    // Without the folder (it cannot be made), outputs come back through pipes, none saved.
    const outputs = await this.host.outputsOf?.(this.place.root).catch(() => undefined);
    return PlaceSandbox.open({ ...policy, kind: policy.kind }, this.place.label, this.place.root, this.host, {
      otherPlaceFolders: otherPlacesFolders(dir, this.place),
      ...(outputs !== undefined && { outputs }),
    });
  }
}
