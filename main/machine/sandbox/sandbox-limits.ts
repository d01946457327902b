import { totalmem } from 'node:os';
import type { LimitInEffect, LimitsInEffect } from '../../../common/api/place-policy.js';
import type { PlaceLimits } from '../../places/sandbox-policy.js';
import { MachineError } from '../errors.js';
import { bubblewrapSizesTmpfs } from './bubblewrap-check.js';
import { openCgroups, type PlaceCgroups, type PlaceGroup } from './cgroups.js';
import { enforcerFor } from './sandbox-check.js';

export type { LimitInEffect, LimitsInEffect };

/** A place's limits as applied: each set by the place, else the machine's default. */
export interface LimitValues {
  readonly processes: number;
  readonly memoryMb: number;
  readonly tmpMb: number;
}

export type LimitName = keyof LimitValues;

/** What this machine enforces of the limits, found once at start: how, and why not for each it cannot. */
export interface LimitSupport {
  /** How the processes and memory limits are enforced, in words (absent: they are not). */
  readonly how?: string;
  readonly unenforced: Partial<Record<LimitName, string>>;
}

/** Processes and threads at once: about systemd's default for a service; a build or a browser uses a few hundred. */
export const DEFAULT_PROCESSES = 4096;
/** The private /tmp (and each other temp folder of the sandbox's own): its files are in memory. */
export const DEFAULT_TMP_MB = 2048;

/** The machine's defaults: what its settings say, else the built-in ones (memory: half of this machine's). */
export function defaultLimitValues(settings: PlaceLimits = {}, totalBytes = totalmem()): LimitValues {
  const memoryMb = settings.memoryMb ?? Math.max(256, Math.floor(totalBytes / 2 / 1024 ** 2));
  return { processes: settings.processes ?? DEFAULT_PROCESSES, memoryMb, tmpMb: settings.tmpMb ?? Math.min(DEFAULT_TMP_MB, memoryMb) };
}

/**
 * The limits of the places' sandboxed commands on this machine: the defaults, what the machine can
 * enforce (control groups for processes and memory, cgroups.ts; bubblewrap's sized tmpfs for the
 * temp folders), and each place's group.
 */
export class SandboxLimits {
  private constructor(
    readonly defaults: LimitValues,
    readonly support: LimitSupport,
    private readonly cgroups: PlaceCgroups | undefined,
  ) {}

  /** Finds what this machine enforces (once: the server shows it as found). */
  static async open(
    defaults: LimitValues,
    env: NodeJS.ProcessEnv = process.env,
    platform: NodeJS.Platform = process.platform,
  ): Promise<SandboxLimits> {
    const unenforced: Partial<Record<LimitName, string>> = {};
    if (enforcerFor(platform) === 'seatbelt') {
      const why = 'macOS gives a sandboxed command no limit on the processes or memory of a group of them';
      return new SandboxLimits(
        defaults,
        {
          unenforced: {
            processes: why,
            memoryMb: why,
            tmpMb: 'on macOS the private temp folder is a folder of the state dir, not a file system of its own',
          },
        },
        undefined,
      );
    }
    if (enforcerFor(platform) !== 'bubblewrap') return new SandboxLimits(defaults, { unenforced: {} }, undefined);
    // Two probes of their own (each runs a program): at once, not one after the other.
    const [sizesTmpfs, found] = await Promise.all([bubblewrapSizesTmpfs(env), openCgroups(env)]);
    if (!sizesTmpfs) unenforced.tmpMb = 'this bubblewrap cannot size a temp folder (--size came in bubblewrap 0.6): install a newer one';
    const controllers = found.cgroups?.controllers ?? new Set();
    const why = (what: string) => (found.cgroups ? `the control groups here have no ${what} controller (${found.how})` : found.why);
    if (!controllers.has('pids')) unenforced.processes = why('pids');
    if (!controllers.has('memory')) unenforced.memoryMb = why('memory');
    return new SandboxLimits(defaults, { ...(found.cgroups && { how: found.how }), unenforced }, found.cgroups);
  }

  /** A place's limits: its own, else the defaults. */
  valuesOf(limits: PlaceLimits = {}): LimitValues {
    return {
      processes: limits.processes ?? this.defaults.processes,
      memoryMb: limits.memoryMb ?? this.defaults.memoryMb,
      tmpMb: limits.tmpMb ?? this.defaults.tmpMb,
    };
  }

  /** A place's limits as applied and what of them this machine enforces. */
  inEffect(limits: PlaceLimits = {}): LimitsInEffect {
    const values = this.valuesOf(limits);
    const each = (name: LimitName): LimitInEffect => {
      const unenforced = this.support.unenforced[name];
      return { value: values[name], byDefault: limits[name] === undefined, ...(unenforced !== undefined && { unenforced }) };
    };
    return {
      processes: each('processes'),
      memoryMb: each('memoryMb'),
      tmpMb: each('tmpMb'),
      ...(this.support.how !== undefined && this.cgroups && { enforcedBy: { how: this.support.how, groups: this.cgroups.folders } }),
    };
  }

  /** The size of the sandbox's temp folders, when bubblewrap can size them. */
  tmpMbOf(values: LimitValues): number | undefined {
    return this.support.unenforced.tmpMb === undefined ? values.tmpMb : undefined;
  }

  /** The place's control group with its limits, that its commands join; none where the machine has none. */
  groupOf(root: string, label: string, values: LimitValues): PlaceGroup | undefined {
    if (!this.cgroups) return undefined;
    try {
      return this.cgroups.groupOf(root, { processes: values.processes, memoryBytes: values.memoryMb * 1024 ** 2 });
    } catch (error) {
      throw new MachineError(
        'sandbox_unavailable',
        `The limits of ${label} could not be applied: ${(error as Error).message}. Run the command again once the place's other commands have ended.`,
      );
    }
  }

  /** Removes the places' groups (their sandboxes have ended). */
  close(): Promise<void> {
    return this.cgroups?.close() ?? Promise.resolve();
  }
}
