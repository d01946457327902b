import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Launch } from '../../machine/command-runner.js';
import { machineEnv, PlaceSandbox, sandboxMissing, type SandboxHost } from '../../machine/sandbox/place-sandbox.js';
import { sandboxProblem } from '../../machine/sandbox/sandbox-check.js';
import { policyOf, type AccessDirectory } from '../../places/access-directory.js';
import { placeFromRoot } from '../../places/place-root.js';
import type { SandboxPolicy } from '../../places/sandbox-policy.js';
import type { PlaceSecrets } from '../../secrets/place-secrets.js';
import type { LocalConnection } from '../store/connection-store.js';
import { commandLine } from './local-command.js';
import type { LocalStart } from './local-upstream.js';

export interface LocalLaunchDeps {
  access: AccessDirectory;
  placeSecrets: PlaceSecrets;
  /** The machine as the sandbox sees it (its live-sandbox pool is not used: each server gets a sandbox of its own). */
  host: SandboxHost;
  /** Where each place's local servers keep their package caches and home (outside the app's sealed state dir). */
  cacheRoot: string;
}

/** The policy a local server of this connection runs under, as a key: a change ends the running process. */
export async function localPolicyKey(connection: LocalConnection, deps: Pick<LocalLaunchDeps, 'access'>): Promise<string> {
  return JSON.stringify(policyOf(await deps.access.snapshot(), placeFromRoot(connection.root)));
}

/**
 * How to start a connection's local server now. Under `machine`, the command itself, as the app's
 * user, in the place's folder. Under `place` and `strict`, `bash -c 'exec COMMAND'` in a sandbox of
 * its own made by the same launcher as `bash` (PlaceSandbox): the place's folders and sealed paths,
 * plus the place's cache folder (npm's and uv's caches, and under `strict` its home); its network
 * is the place's allow-list plus the hosts the connection declares. Its environment: under machine
 * the app's without the app's own variables, sandboxed only the harmless ones (sandboxEnv); plus
 * its variables from the place's secrets, read now.
 */
export async function localLaunch(connection: LocalConnection, deps: LocalLaunchDeps): Promise<LocalStart> {
  const place = placeFromRoot(connection.root);
  const policy = policyOf(await deps.access.snapshot(), place);
  const secrets = await Promise.all(
    connection.local.env.map(async ({ name, secret }) => ({ name, secret, value: await deps.placeSecrets.value(connection.root, secret) })),
  );
  const secretEnv = Object.fromEntries(secrets.map((s) => [s.name, s.value]));
  const start = {
    policyKey: JSON.stringify(policy),
    secrets: secrets.map((s) => ({ name: s.secret, value: s.value })),
    commandLine: commandLine(connection.local),
  };
  const folder = resolve(deps.host.workspaceRoot, connection.root);
  if (policy.kind === 'machine') {
    const launch: Launch = {
      file: connection.local.command,
      args: [...connection.local.args],
      env: { ...machineEnv(deps.host.env), ...secretEnv },
      cwd: folder,
    };
    return { launch, ...start };
  }
  const problem = await sandboxProblem(deps.host.env);
  if (problem) throw sandboxMissing(`${place.label} has the ${policy.kind} policy, but ${problem}`);
  const cache = placeCache(deps.cacheRoot, connection.root);
  // The place's policy whole (its seals and lifted stores too), with the cache and the connection's hosts added.
  const sandboxed: SandboxPolicy & { kind: 'place' | 'strict' } = {
    ...policy,
    kind: policy.kind,
    folders: [...policy.folders, cache],
    network: [...new Set([...(policy.network ?? []), ...(connection.local.hosts ?? [])])],
  };
  const sandbox = PlaceSandbox.open(sandboxed, place.label, connection.root, { ...deps.host, sandboxes: undefined });
  const launch = await sandbox.launch(`exec ${commandLine(connection.local)}`, false);
  const cacheEnv: Record<string, string> = {
    npm_config_cache: join(cache, 'npm'),
    XDG_CACHE_HOME: join(cache, 'cache'),
    XDG_DATA_HOME: join(cache, 'data'),
    // Under strict the person's home is out of reach: the server gets one of its own.
    ...(policy.kind === 'strict' && { HOME: join(cache, 'home') }),
  };
  for (const dir of Object.values(cacheEnv)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { launch: { ...launch, env: { ...launch.env, ...cacheEnv, ...secretEnv } }, ...start };
}

/**
 * The place's own cache folder, made here (0700). It is bound writable into the place's local
 * servers' sandboxes, so it must be the folder this app made: a link (planted by an agent under
 * the machine policy) would bind whatever it points to.
 */
function placeCache(cacheRoot: string, root: string): string {
  const path = join(resolve(cacheRoot), createHash('sha256').update(`place:${root}`).digest('hex').slice(0, 16));
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const info = lstatSync(path);
  if (!info.isDirectory() || (process.getuid && info.uid !== process.getuid())) {
    throw new Error(`The cache folder ${path} is not a folder of this app's own (a link, or another user's). Remove it; it is made again.`);
  }
  return path;
}
