import { resolve } from 'node:path';
import type { Place } from '../../places/place-root.js';
import { userError } from '../../user-errors.js';
import { installHosts } from '../local/install-hosts.js';
import { checkLocalCommand, commandLine } from '../local/local-command.js';
import type { AddConnection } from '../../../common/api/connections.js';
import type { ConnectionView, PlaceConnections } from '../place-connections.js';
import { checkServerUrl } from '../server-url.js';
import { CLIENT_NAMES, projectFiles, userFiles, type ClientFile, type ClientId, type Machine } from './client-files.js';
import { ClientConfigError } from './client-config-errors.js';
import { parseConfig, readConfigText } from './config-file.js';
import { foundServers, type FoundServer } from './found-servers.js';

/** One server of a client's configuration as it would be added to the place: never a secret value. */
export interface ImportItem {
  id: string;
  client: ClientId;
  clientName: string;
  scope: 'user' | 'project';
  file: string;
  name: string;
  kind: 'remote' | 'local';
  /**
   * What would be added: a remote server (URL, and the header its key goes in), or a local one (its
   * command, and the hosts its launcher installs from, which it may reach under the strict policy).
   */
  adds?:
    | { url: string; transport: 'streamable-http' | 'sse'; header?: { name: string; prefix?: string; secret: string } }
    | { commandLine: string; env: Record<string, string>; hosts: string[] };
  /** The place secrets it would create, each with where its value comes from (a variable, a header). */
  secrets: { name: string; from: string }[];
  /** Why it cannot be imported as it is. */
  problem?: string;
  /** What is left out (other headers). */
  notes: string[];
}

/** A file that could not be read, with why (the others are still listed). */
export interface ImportFileProblem {
  client: ClientId;
  file: string;
  problem: string;
}

export interface ImportPlan {
  place: Place;
  items: ImportItem[];
  problems: ImportFileProblem[];
  /** Every file looked at, found or not. */
  files: { client: ClientId; scope: 'user' | 'project'; path: string; found: boolean }[];
}

export interface ImportResult {
  id: string;
  name: string;
  added?: ConnectionView;
  error?: string;
}

export interface ClientImportDeps {
  connections: PlaceConnections;
  workspaceRoot: string;
  machine: Machine;
  allowPrivateNetwork: boolean;
}

// A header that carries a credential: its value goes into a place secret.
const CREDENTIAL_HEADER = /authorization|api[-_]?key|token|secret|key/i;

/**
 * Import from the MCP clients on this machine: reads Claude Desktop's, Cursor's, VS Code's and
 * Claude Code's configurations (the person's own files, and the place folder's), shows what each
 * server would become in the place (remote entries as remote connections, stdio ones as local
 * ones, literal keys and tokens as place secrets), and adds what the person picks. It never
 * writes to those files.
 */
export class ClientImport {
  constructor(private readonly deps: ClientImportDeps) {}

  async plan(person: string, place: Place): Promise<ImportPlan> {
    const { items, problems, files } = await this.read(place);
    const taken = new Set(await this.deps.connections.secretNames(person, place));
    const planned: ImportItem[] = [];
    for (const found of items) planned.push(await this.itemOf(found, taken));
    return { place, items: planned, problems, files };
  }

  /** Adds the chosen servers (by item id), read again from their files now; each succeeds or fails on its own. */
  async run(person: string, place: Place, ids: readonly string[]): Promise<ImportResult[]> {
    const { items } = await this.read(place);
    const taken = new Set(await this.deps.connections.secretNames(person, place));
    const results: ImportResult[] = [];
    for (const id of new Set(ids)) {
      const found = items.find((item) => item.id === id);
      if (!found) {
        results.push({ id, name: id, error: "It is no longer in the client's configuration. List again to see what is there." });
        continue;
      }
      const item = await this.itemOf(found, taken);
      if (item.problem) {
        results.push({ id, name: item.name, error: item.problem });
        continue;
      }
      results.push(await this.add(person, place, found, item));
    }
    return results;
  }

  private async add(person: string, place: Place, found: FoundServer, item: ImportItem): Promise<ImportResult> {
    const created: string[] = [];
    try {
      for (const { name, from } of item.secrets) {
        await this.deps.connections.setSecret(person, place, name, valueOf(found, from), { replace: false });
        created.push(name);
      }
      const added = await this.deps.connections.add(person, place, requestOf(found, item));
      return { id: item.id, name: item.name, added };
    } catch (error) {
      // Nothing of a failed import stays behind.
      for (const name of created) await this.deps.connections.removeSecret(person, place, name).catch(() => {});
      const known = userError(error);
      if (!known) throw error;
      return { id: item.id, name: item.name, error: known.message };
    }
  }

  private async read(place: Place): Promise<{ items: FoundServer[]; problems: ImportFileProblem[]; files: ImportPlan['files'] }> {
    const { machine } = this.deps;
    const folder = resolve(this.deps.workspaceRoot, place.root);
    const candidates: ClientFile[] = [...userFiles(machine), ...projectFiles(folder, machine)];
    const items: FoundServer[] = [];
    const problems: ImportFileProblem[] = [];
    const files: ImportPlan['files'] = [];
    const texts = new Map<string, Promise<{ json: unknown } | { problem: string } | undefined>>();
    for (const file of candidates) {
      // ~/.claude.json holds both the user's servers and the folders': read once.
      let read = texts.get(file.path);
      if (!read) texts.set(file.path, (read = readJson(file.path)));
      const content = await read;
      files.push({ client: file.client, scope: file.scope, path: file.path, found: content !== undefined && !('problem' in content) });
      if (!content) continue;
      if ('problem' in content) {
        if (!problems.some((p) => p.file === file.path)) problems.push({ client: file.client, file: file.path, problem: content.problem });
        continue;
      }
      items.push(...foundServers(file, content.json));
    }
    return { items, problems, files };
  }

  private async itemOf(found: FoundServer, taken: Set<string>): Promise<ImportItem> {
    const base = {
      id: found.id,
      client: found.file.client,
      clientName: CLIENT_NAMES[found.file.client],
      scope: found.file.scope,
      file: found.file.path,
      name: found.name,
      secrets: [] as ImportItem['secrets'],
      notes: [] as string[],
    };
    if (found.kind === 'unusable') return { ...base, kind: 'local', problem: `It cannot be imported: ${found.problem}.` };
    const secretName = (wanted: string) => freeName(wanted, taken);
    if (found.kind === 'remote') {
      const item: ImportItem = { ...base, kind: 'remote' };
      try {
        checkServerUrl(found.url, this.deps.allowPrivateNetwork);
      } catch (error) {
        return { ...item, problem: (error as Error).message };
      }
      const [credential, ...others] = Object.keys(found.headers).filter((name) => CREDENTIAL_HEADER.test(name));
      for (const name of [...others, ...Object.keys(found.headers).filter((name) => !CREDENTIAL_HEADER.test(name))]) {
        item.notes.push(`The header ${name} is not sent: a connection sends one credentials header.`);
      }
      const filled = filledIn(found, [
        ['URL', found.url],
        ...(credential ? [[`${credential} header`, found.headers[credential]!] as [string, string]] : []),
      ]);
      if (filled) return { ...item, problem: filled };
      let header: { name: string; prefix?: string; secret: string } | undefined;
      if (credential) {
        const value = found.headers[credential]!;
        const prefix = /^(Bearer|Token|Basic) /i.exec(value)?.[0];
        header = { name: credential, ...(prefix && { prefix }), secret: secretName(`${slug(found.name)}_${slug(credential)}`) };
        item.secrets.push({ name: header.secret, from: `header ${credential}` });
      }
      return { ...item, adds: { url: found.url, transport: found.transport, ...(header && { header }) } };
    }
    const item: ImportItem = { ...base, kind: 'local' };
    const filled = filledIn(found, [
      ['command', found.command],
      ...found.args.map((arg, i): [string, string] => [`argument ${i + 1}`, arg]),
      ...Object.entries(found.env).map(([name, value]): [string, string] => [`variable ${name}`, value]),
    ]);
    if (filled) return { ...item, problem: filled };
    if (found.cwd !== undefined)
      item.notes.push(`It runs in the place's folder, not in ${found.cwd.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').slice(0, 200)}.`);
    const env: Record<string, string> = {};
    for (const name of Object.keys(found.env)) {
      env[name] = secretName(name);
      item.secrets.push({ name: env[name]!, from: `variable ${name}` });
    }
    try {
      const local = checkLocalCommand({ command: found.command, args: found.args, env });
      return { ...item, adds: { commandLine: commandLine(local), env, hosts: await installHosts(local.command) } };
    } catch (error) {
      return { ...item, secrets: [], problem: (error as Error).message };
    }
  }
}

/**
 * Why the entry cannot be taken as it is, if one of its values is filled in by the client when it
 * starts the server (`${input:key}`, `${env:NAME}`, `${NAME}`, `${workspaceFolder}`): this app
 * has no such value, so it says which and leaves the entry to be added by hand.
 */
function filledIn(found: FoundServer, values: [string, string][]): string | undefined {
  for (const [where, value] of values) {
    const reference = /\$\{([^}]{0,100})\}/.exec(value);
    if (!reference) continue;
    const client = CLIENT_NAMES[found.file.client];
    const input = /^input:(.+)$/.exec(reference[1]!)?.[1];
    const from =
      input !== undefined
        ? `what ${client} asks for when it starts the server (${reference[0]}${found.inputs[input] ? `: “${found.inputs[input]}”` : ''})`
        : `a variable of ${client} (${reference[0]})`;
    return `Its ${where} takes its value from ${from}; add it by hand with a place secret.`;
  }
  return undefined;
}

async function readJson(path: string): Promise<{ json: unknown } | { problem: string } | undefined> {
  try {
    const read = await readConfigText(path);
    return read && { json: parseConfig(path, read.text) };
  } catch (error) {
    if (error instanceof ClientConfigError) return { problem: error.message };
    throw error;
  }
}

/** The value a secret of the item is made of: a variable's, or the header's without its scheme. */
function valueOf(found: FoundServer, from: string): string {
  const [kind, name] = from.split(' ', 2) as [string, string];
  if (kind === 'variable' && found.kind === 'local') return found.env[name]!;
  if (kind === 'header' && found.kind === 'remote') return found.headers[name]!.replace(/^(Bearer|Token|Basic) /i, '');
  throw new Error(`no ${from} in ${found.name}`);
}

function requestOf(found: FoundServer, item: ImportItem): AddConnection {
  if (found.kind === 'remote' && item.adds && 'url' in item.adds) {
    return {
      server: {
        url: item.adds.url,
        name: found.name,
        transport: item.adds.transport,
        ...(item.adds.header && { header: item.adds.header }),
      },
    };
  }
  if (found.kind === 'local' && item.adds && 'env' in item.adds)
    return { local: { command: found.command, args: found.args, env: item.adds.env, hosts: item.adds.hosts, name: found.name } };
  throw new Error(`${found.name} cannot be added`);
}

/** A secret name (letters, digits, _ . -) not yet taken in the place, nor by this import. */
function freeName(wanted: string, taken: Set<string>): string {
  const base = wanted.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 60) || 'SECRET';
  let name = base;
  for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

function slug(text: string): string {
  return text
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}
