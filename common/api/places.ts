import * as z from 'zod';

// A place and what its agents reach, as the API gives and takes them (main/http/api-routes.ts).

export const placeKind = z.enum(['machine', 'workflow', 'crew', 'work', 'code']);

/** A place: relative to the workspace root ('' is This machine), with a label for people. */
export const place = z.object({
  root: z.string(),
  kind: placeKind,
  /** The user id in `_users/<owner>/...`: a Work or Code project's owner. */
  owner: z.string().optional(),
  label: z.string(),
});

/** A place with whether the person asking may edit it. */
export const placeForPerson = place.extend({ canEdit: z.boolean() });
export type PlaceForPerson = z.infer<typeof placeForPerson>;

/** GET /api/places */
export const placesAnswer = z.object({
  places: z.array(placeForPerson),
  /** The disk scan stopped early: some place folders may be missing. */
  truncated: z.boolean(),
});

export const policyKind = z.enum(['machine', 'place', 'strict']);

/** What a place's sandboxed commands may use together: processes and threads at once, memory and its /tmp in MiB. */
export const placeLimits = z
  .object({ processes: z.number().optional(), memoryMb: z.number().optional(), tmpMb: z.number().optional() })
  .strict();

/** One limit as applied: its value, whether it is the machine's default, and why this machine does not enforce it (absent: it does). */
const limitInEffect = z.object({ value: z.number(), byDefault: z.boolean(), unenforced: z.string().optional() });

/** A place's limits as applied, with how processes and memory are enforced and the folders of the server's control groups. */
export const limitsInEffect = z.object({
  processes: limitInEffect,
  memoryMb: limitInEffect,
  tmpMb: limitInEffect,
  enforcedBy: z.object({ how: z.string(), groups: z.array(z.string()).readonly() }).optional(),
});
export type LimitsInEffect = z.infer<typeof limitsInEffect>;
export type LimitInEffect = z.infer<typeof limitInEffect>;
export type LimitName = keyof z.infer<typeof placeLimits>;

/** A credential store, sealed from a place's agents unless the owner lifted it for that place. */
export const credentialStoreState = z.object({
  /** What the owner names to lift it (`~/.ssh`), and what a refusal names. */
  name: z.string(),
  /** What it holds, in words. */
  what: z.string(),
  lifted: z.boolean(),
});
export type CredentialStoreState = z.infer<typeof credentialStoreState>;

/** What a place's agents reach, with why this machine cannot honour it (no sandbox): its agents are then refused. */
export const placePolicy = z.object({
  kind: policyKind,
  folders: z.array(z.string()),
  /** The hosts its sandboxed commands may reach (beyond public hosts under place); absent: none. */
  network: z.array(z.string()).optional(),
  /** Paths sealed beyond the credential stores (absolute, or `~/...`); absent when none. */
  seal: z.array(z.string()).optional(),
  /** Credential stores (by name) this place's agents may reach; absent when none. */
  unseal: z.array(z.string()).optional(),
  /** Limits of its sandboxed commands other than the machine's defaults; absent: the defaults. */
  limits: placeLimits.optional(),
  problem: z.string().optional(),
  /** Sandboxed: each credential store, sealed unless lifted for this place. */
  credentialStores: z.array(credentialStoreState).optional(),
  /** Sandboxed: each limit as the running server applies it, and what this machine does not enforce. */
  limitsInEffect: limitsInEffect.optional(),
});
export type PlacePolicy = z.infer<typeof placePolicy>;

/** At most this many hosts on a place's network allow-list. */
export const MAX_ALLOWED_HOSTS = 200;

/** PUT /api/places/policy */
export const placePolicyBody = z
  .object({ workspace_path: z.string(), policy: z.string(), folders: z.array(z.string()).optional() })
  .strict();
/** PUT /api/places/network */
export const placeNetworkBody = z
  .object({ workspace_path: z.string(), hosts: z.array(z.string().max(300)).max(MAX_ALLOWED_HOSTS) })
  .strict();
/** PUT /api/places/seals: what a place's agents find sealed beyond the credential stores (`seal`), and the stores lifted for it (`unseal`). */
export const placeSealsBody = z
  .object({ workspace_path: z.string(), seal: z.array(z.string().max(4096)).max(100), unseal: z.array(z.string().max(100)).max(100) })
  .strict();
/** PUT /api/places/limits: a place's limits, replaced whole (a limit left out is the machine's default). */
export const placeLimitsBody = placeLimits.extend({ workspace_path: z.string() }).strict();
/** The answer to each. */
export const placePolicyAnswer = z.object({ policy: placePolicy });

export const toolSearchMode = z.enum(['on', 'off', 'auto']);
export type ToolSearchMode = z.infer<typeof toolSearchMode>;

/** Tool search in a place, as measured now: GET /api/tool-search, PUT /api/access/places/tool-search. */
export const placeToolSearchAnswer = z.object({
  workspace_path: z.string(),
  label: z.string(),
  /** The place's own setting. */
  mode: toolSearchMode,
  /** How many tools an agent there would list without tool search. */
  toolCount: z.number(),
  threshold: z.number(),
  /** Whether agents there get search_tools and call_tool (for tokens without a setting of their own). */
  on: z.boolean(),
  by: z.enum(['token', 'place', 'automatic']),
});
export type PlaceToolSearch = z.infer<typeof placeToolSearchAnswer>;
/** A place's tool search as `places tool-search --json` prints it: with no server running, nobody counted its tools. */
export const placeToolSearchSetting = placeToolSearchAnswer.partial({ toolCount: true, on: true, by: true });
export type PlaceToolSearchSetting = z.infer<typeof placeToolSearchSetting>;

export const toolSearchBody = z.object({ mode: z.string() }).strict();
export const placeToolSearchBody = toolSearchBody.extend({ workspace_path: z.string() }).strict();

/** The access directory's changes (the owner only). */
export const personBody = z.object({ name: z.string(), disabled: z.boolean().optional() }).strict();
export const placeAccessBody = z
  .object({ workspace_path: z.string(), editors: z.array(z.string()).optional(), readers: z.array(z.string()).optional() })
  .strict();
