// What the API says of a place's sandbox beyond its kind: what is sealed from its agents and the
// limits in effect on this machine. The page, the CLI and the server use these.

export type LimitName = 'processes' | 'memoryMb' | 'tmpMb';

/** One limit of a place as applied: its value, whether it is the machine's default, and why this machine does not enforce it (absent: it does). */
export interface LimitInEffect {
  readonly value: number;
  readonly byDefault: boolean;
  readonly unenforced?: string;
}

/** A place's limits as applied, for people (the page's place header, `places policy`). */
export type LimitsInEffect = Record<LimitName, LimitInEffect> & {
  /** How processes and memory are enforced, in words, and the folders of this server's control groups. */
  readonly enforcedBy?: { readonly how: string; readonly groups: readonly string[] };
};

/** A credential store, sealed from a place's agents unless the owner lifted it for that place. */
export interface CredentialStoreState {
  /** What the owner names to lift it (`~/.ssh`), and what a refusal names. */
  readonly name: string;
  /** What it holds, in words. */
  readonly what: string;
  readonly lifted: boolean;
}
