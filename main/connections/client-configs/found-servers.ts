import { createHash } from 'node:crypto';
import type { ClientFile } from './client-files.js';
import { valueAt } from './config-file.js';

type Entry =
  | { kind: 'remote'; url: string; transport: 'streamable-http' | 'sse'; headers: Record<string, string> }
  | { kind: 'local'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: 'unusable'; problem: string };

/** A server as a client's configuration file has it (values included: they never leave this process but as secrets). */
export type FoundServer = {
  /** Stable while the file keeps the entry: its file, where, and name, hashed. */
  id: string;
  file: ClientFile;
  /** Its name in the file, without control characters, at most 100 characters. */
  name: string;
  /** VS Code's `inputs` of that file (id → description): the values it asks for when it starts a server. */
  inputs: Record<string, string>;
} & Entry;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const MAX_SERVERS = 200;

/**
 * The servers of one file, each checked for the fields it needs (strings where strings go); an
 * entry this app cannot use says why rather than disappearing. At most 200 per file.
 */
export function foundServers(file: ClientFile, json: unknown): FoundServer[] {
  const servers = valueAt(json, file.serversAt);
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) return [];
  const inputs = inputsOf(valueAt(json, [...file.serversAt.slice(0, -1), 'inputs']));
  return Object.entries(servers as Record<string, unknown>)
    .slice(0, MAX_SERVERS)
    .map(([key, entry]) => {
      const base = { id: idOf(file, key), file, name: key.replace(CONTROL, '').slice(0, 100) || 'server', inputs };
      return { ...base, ...readEntry(entry) } as FoundServer;
    });
}

function readEntry(entry: unknown): Entry {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return { kind: 'unusable', problem: 'its entry is not an object' };
  const e = entry as Record<string, unknown>;
  const type = typeof e.type === 'string' ? e.type : undefined;
  if (typeof e.url === 'string' || typeof e.serverUrl === 'string') {
    const url = (e.url ?? e.serverUrl) as string;
    const headers = stringRecord(e.headers);
    if (!headers) return { kind: 'unusable', problem: 'its headers are not all text' };
    return { kind: 'remote', url, transport: type === 'sse' ? 'sse' : 'streamable-http', headers };
  }
  if (typeof e.command === 'string') {
    const args =
      Array.isArray(e.args) && e.args.every((a) => typeof a === 'string') ? (e.args as string[]) : e.args === undefined ? [] : undefined;
    const env = stringRecord(e.env);
    if (!args) return { kind: 'unusable', problem: 'its args are not all text' };
    if (!env) return { kind: 'unusable', problem: 'its env values are not all text' };
    if (e.envFile !== undefined)
      return { kind: 'unusable', problem: 'it reads its variables from a file (envFile), which is not imported; add it by hand' };
    if (e.cwd !== undefined && typeof e.cwd !== 'string') return { kind: 'unusable', problem: 'its cwd is not text' };
    return { kind: 'local', command: e.command, args, env, ...(typeof e.cwd === 'string' && { cwd: e.cwd }) };
  }
  return { kind: 'unusable', problem: `it has neither a command nor a URL${type ? ` (type ${type})` : ''}` };
}

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  return entries.every(([, v]) => typeof v === 'string') ? Object.fromEntries(entries as [string, string][]) : undefined;
}

/** VS Code's `inputs`: `[{ id, description, type, password }]`, as id → description (a bad one is skipped). */
function inputsOf(value: unknown): Record<string, string> {
  if (!Array.isArray(value)) return {};
  const inputs: Record<string, string> = {};
  for (const input of value.slice(0, MAX_SERVERS)) {
    if (typeof input !== 'object' || input === null || typeof (input as { id?: unknown }).id !== 'string') continue;
    const { id, description } = input as { id: string; description?: unknown };
    inputs[id] = typeof description === 'string' ? description.replace(CONTROL, '').slice(0, 200) : '';
  }
  return inputs;
}

function idOf(file: ClientFile, key: string): string {
  return createHash('sha256')
    .update(JSON.stringify([file.path, file.serversAt, key]))
    .digest('hex')
    .slice(0, 16);
}
