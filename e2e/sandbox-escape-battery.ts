import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AccessDirectory } from '../main/places/access-directory.js';
import { sealedPaths } from '../main/places/credential-stores.js';
import { enterWorkspace, startHost, type HostFixture } from '../test/support/host-fixture.js';

// What the escape batteries share (e2e/sandbox-escape.test.ts with bubblewrap,
// e2e/sandbox-escape-macos.test.ts with Seatbelt): the host and its targets, the attempts that
// mean the same on both systems, running them as an agent of Crew/alpha, what a refusal must say,
// and the tests that run every attempt under each policy.

export interface Attempt {
  name: string;
  /** A bash command (success: exit code 0), or a file tool call (success: not an error). */
  bash?: string;
  tool?: { name: 'read' | 'write' | 'edit'; arguments: Record<string, unknown> };
}

export interface Targets {
  /** The app's state dir, with secrets.key and secrets.enc.json in it. */
  state: string;
  /** The workspace root, with Crew/alpha (the agent's place) and Crew/beta (notes.txt, sub/). */
  ws: string;
  /** A symlink in Crew/alpha to the key is at key-link. */
  alpha: string;
  controlUrl: string;
  agentUrl: string;
  /** The home folder the app runs with (HOME), a credential planted in each of its stores. */
  home: string;
  /** A file in each credential store of the home folder (sealedPaths' defaults). */
  credentials: string[];
  /** A saved output of an agent of Crew/beta (too big to return: saved for it to read). */
  betaOutput: string;
  /** An extra folder of Crew/beta (place policy), with secret.txt in it. */
  betaFolder: string;
  /** A Unix socket of the owner's in the host's /tmp (as tmux's, X11's, an agent's), answering HTTP with "reached". */
  tmpSocket: string;
}

/** Credentials in the app's environment (whatever launched it had them exported), planted for the run. */
export const PLANTED_ENV = { AWS_SECRET_ACCESS_KEY: 'planted-aws-secret', GITHUB_TOKEN: 'planted-github-token' };

/** A host with an agent of Crew/alpha connected, and the targets of the attempts in place. */
export interface EscapeHost {
  fx: HostFixture;
  client: Client;
  /** An agent of Crew/beta (place policy). */
  beta: Client;
  targets: Targets;
  setPolicy(kind: 'machine' | 'place' | 'strict', network?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the host in a workspace of Crew/alpha and Crew/beta (a temp folder named by `prefix`) and
 * lays out the targets: the app's secrets, another place's files, extra folder and saved output,
 * the owner's credential stores in a home folder of the test's own, a socket in /tmp.
 */
export async function startEscapeHost(prefix: string): Promise<EscapeHost> {
  const workspace = await enterWorkspace(prefix, ['Crew/alpha', 'Crew/beta']);
  const ws = workspace.dir;
  const alpha = join(ws, 'Crew', 'alpha');
  // Outside the temp folder, which the sandbox replaces whole: the owner's home for this run (the
  // sandbox seals the stores of the home the app runs with) and Crew/beta's extra folder.
  const previousHome = process.env.HOME;
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  const outside = await mkdtemp(join(homedir(), '.cache', 'pw-escape-'));
  const home = join(outside, 'home');
  process.env.HOME = home;
  const previousEnv = Object.fromEntries(Object.keys(PLANTED_ENV).map((name) => [name, process.env[name]]));
  Object.assign(process.env, PLANTED_ENV);
  const credentials = await plantCredentials(home);
  const fx = await startHost();
  const controlUrl = await fx.host.open();
  // The token's signing key makes the secrets file and its key exist in the state dir.
  const tokens = await fx.host.tokens();
  const { token } = await tokens.create({ name: 'alpha agent', workspacePath: 'Crew/alpha' });
  const { client } = await fx.connect(token);
  const state = fx.stateDir;
  const key = join(state, 'secrets.key');
  await stat(key);
  await stat(join(state, 'secrets.enc.json'));
  await writeFile(join(ws, 'Crew', 'beta', 'notes.txt'), 'beta notes\n');
  await symlink(key, join(alpha, 'key-link'));
  await mkdir(join(ws, 'Crew', 'beta', 'sub'));

  // Crew/beta: an extra folder of its own, and an output saved for its agent.
  const betaFolder = join(outside, 'beta-data');
  await mkdir(betaFolder);
  await writeFile(join(betaFolder, 'secret.txt'), 'beta secret\n');
  await new AccessDirectory(state).setPlacePolicy('Crew/beta', 'place', [betaFolder]);
  const beta = await fx.connect((await tokens.create({ name: 'beta agent', workspacePath: 'Crew/beta' })).token);
  const saved = (await beta.client.callTool({ name: 'bash', arguments: { command: 'seq 1 20000; echo beta-output' } })) as {
    structuredContent?: { stdoutFullOutputPath?: string };
  };
  const betaOutput = saved.structuredContent?.stdoutFullOutputPath;
  assert.ok(betaOutput, `beta's output was saved: ${JSON.stringify(saved).slice(0, 500)}`);

  const socketDir = await mkdtemp(join(tmpdir(), 'pw-escape-owner-'));
  const tmpSocket = join(socketDir, 'agent.sock');
  const socketServer = createServer((_req, res) => res.end('reached'));
  socketServer.listen(tmpSocket);
  await once(socketServer, 'listening');
  return {
    fx,
    client,
    beta: beta.client,
    targets: { state, ws, alpha, controlUrl, agentUrl: fx.url, home, credentials, betaOutput, betaFolder, tmpSocket },
    setPolicy: (kind, network) => setPolicy(state, kind, network),
    async close() {
      socketServer.close();
      await fx.close();
      await workspace.leave();
      for (const [name, value] of Object.entries({ ...previousEnv, HOME: previousHome })) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await Promise.all([outside, socketDir].map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

/** A file in each credential store the sandbox seals by default (a folder's store gets one inside). */
async function plantCredentials(home: string): Promise<string[]> {
  const files: string[] = [];
  for (const { path } of sealedPaths({}, { HOME: home })) {
    // A store that is a file (~/.netrc, a history) by its name; a folder gets a file inside.
    const file = /\.(json|netrc|npmrc|pypirc|git-credentials)$|_history$|history$|histfile$|\.zhistory$/.test(path)
      ? path
      : join(path, 'credential');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `secret of ${path}\n`);
    files.push(file);
  }
  return files;
}

/**
 * Registers, in the calling suite, the battery's tests: under place and strict (also with the
 * network allowed to the loopback names) every attempt is refused with its reason and nothing
 * outside the place changed; under machine every attempt gets through, which proves that each one
 * reaches its target when nothing stops it. Reads the host and the attempts once the suite runs.
 */
export function itRunsTheBattery(current: () => { host: EscapeHost; attempts: readonly Attempt[] }): void {
  for (const [kind, network] of [
    ['place', []],
    ['strict', []],
    ['strict', ['localhost', '127.0.0.1']],
  ] as const) {
    it(`refuses every attempt under ${kind}${network.length ? ` with the network allow-list ${network.join(', ')}` : ''}, each with a clear error`, async () => {
      const { host, attempts } = current();
      const { ws, state } = host.targets;
      await host.setPolicy(kind, network);
      await assertAllRefused(host.client, attempts, kind);
      assert.equal(await readFile(join(ws, 'Crew', 'beta', 'notes.txt'), 'utf8'), 'beta notes\n', 'nothing changed outside');
      await assert.rejects(stat(join(ws, 'planted.txt')));
      await assert.rejects(stat(join(state, 'planted')));
      await stat(join(state, 'secrets.key'));
    });
  }

  it('lets the same attempts through under machine', async () => {
    const { host, attempts } = current();
    await host.setPolicy('machine');
    await assertAllWork(host.client, attempts);
  });
}

/** Reached: an HTTP answer from the app itself, not a refusal of the sandbox's proxy (which says so in Proxy-Status). */
function reaches(options: string, url: string): string {
  return `h=$(curl -s -m 5 -D - -o /dev/null ${options} ${url}) && echo "$h" | grep -q '^HTTP/' && ! echo "$h" | grep -qi '^proxy-status'`;
}

/** The attempts on the app's secrets, another place, the app's ports and the file tools, the same on every system. */
export function sharedAttempts({
  state,
  ws,
  alpha,
  controlUrl,
  agentUrl,
  credentials,
  betaOutput,
  betaFolder,
  tmpSocket,
}: Targets): Attempt[] {
  const key = join(state, 'secrets.key');
  const agentPort = new URL(agentUrl).port;
  return [
    ...credentials.flatMap((file): Attempt[] => [
      { name: `read the credential ${file}`, bash: `cat '${file}'` },
      { name: `read tool: the credential ${file}`, tool: { name: 'read', arguments: { path: file } } },
    ]),
    { name: "find another place's saved output", bash: `grep -rl beta-output ${dirname(dirname(betaOutput))}` },
    { name: "read another place's saved output", bash: `tail -1 ${betaOutput} | grep -q beta-output` },
    { name: "overwrite another place's saved output", bash: `echo planted > ${betaOutput}` },
    { name: "read tool: another place's saved output", tool: { name: 'read', arguments: { path: betaOutput, offset: -1 } } },
    { name: "write tool: another place's saved output", tool: { name: 'write', arguments: { path: betaOutput, content: 'planted' } } },
    { name: "read another place's extra folder", bash: `cat ${betaFolder}/secret.txt` },
    { name: "read tool: another place's extra folder", tool: { name: 'read', arguments: { path: join(betaFolder, 'secret.txt') } } },
    {
      name: "write tool: another place's extra folder",
      tool: { name: 'write', arguments: { path: join(betaFolder, 'planted.txt'), content: 'x' } },
    },
    { name: "a credential in the app's environment", bash: 'env | grep -e ^AWS_SECRET_ACCESS_KEY= -e ^GITHUB_TOKEN=' },
    { name: "the owner's socket in /tmp", bash: `curl -s -m 5 --noproxy '*' --unix-socket ${tmpSocket} http://owner/ | grep -q reached` },
    { name: 'read the secrets key', bash: `cat ${key}` },
    { name: 'read the secrets file', bash: `cat ${state}/secrets.enc.json` },
    { name: 'list the state dir', bash: `ls ${state} | grep -q secrets` },
    { name: "read another place's file", bash: `cat ${ws}/Crew/beta/notes.txt` },
    { name: "read another place's file through ..", bash: `cat ${alpha}/../beta/notes.txt` },
    { name: 'a symlink in the place pointing at the key', bash: `ln -sf ${key} ${alpha}/new-link && cat ${alpha}/new-link` },
    // Removed again at once: a hard link to the key left in the place stops every command.
    {
      name: 'a hard link to the key',
      bash: `rm -f ${alpha}/new-hard && ln ${key} ${alpha}/new-hard && cat ${alpha}/new-hard; s=$?; rm -f ${alpha}/new-hard; exit $s`,
    },
    { name: 'write outside the place', bash: `echo planted > ${ws}/planted.txt` },
    { name: "write into another place's folder", bash: `echo planted > ${ws}/Crew/beta/sub/planted.txt` },
    { name: 'write into the state dir', bash: `echo planted > ${state}/planted` },
    { name: 'a FIFO in the state dir', bash: `rm -f ${state}/fifo && mkfifo ${state}/fifo` },
    { name: 'curl the control plane', bash: reaches('', `${controlUrl}/api/server`) },
    { name: 'curl the agent endpoint', bash: reaches('', agentUrl) },
    { name: 'curl the control plane past the proxy', bash: reaches("--noproxy '*'", `${controlUrl}/api/server`) },
    {
      name: 'curl the agent endpoint by name, through a CONNECT tunnel',
      bash: reaches('--proxytunnel', `http://localhost:${agentPort}/mcp`),
    },
    { name: 'signal the host', bash: `kill -0 ${process.pid}` },
    { name: 'bash -c inside bash', bash: `bash -c 'bash -c "cat ${key}"'` },
    { name: 'read tool: the key', tool: { name: 'read', arguments: { path: key } } },
    { name: 'read tool: a symlink in the place to the key', tool: { name: 'read', arguments: { path: join(alpha, 'key-link') } } },
    {
      name: "read tool: another place's file through ..",
      tool: { name: 'read', arguments: { path: join(alpha, '..', 'beta', 'notes.txt') } },
    },
    {
      name: "write tool: another place's folder",
      tool: { name: 'write', arguments: { path: join(ws, 'Crew', 'beta', 'planted.txt'), content: 'x' } },
    },
    { name: 'write tool: the state dir', tool: { name: 'write', arguments: { path: join(state, 'planted-too'), content: 'x' } } },
  ];
}

/** Runs one attempt as the agent: whether it got through, and what it was told. */
async function attempt(client: Client, a: Attempt): Promise<{ ok: boolean; text: string }> {
  const result = (await client.callTool(a.bash ? { name: 'bash', arguments: { command: a.bash, timeout: 20 } } : a.tool!)) as {
    isError?: boolean;
    content: Array<{ type: string; text?: string }>;
    structuredContent?: { exitCode: number | null };
  };
  const text = result.content.map((c) => c.text ?? '').join('\n');
  return { ok: a.bash ? result.structuredContent?.exitCode === 0 : !result.isError, text };
}

/** Every attempt fails, saying which policy of Crew alpha refused it and who can change it. */
async function assertAllRefused(client: Client, attempts: readonly Attempt[], kind: 'place' | 'strict'): Promise<void> {
  assert.ok(attempts.length >= 20);
  for (const a of attempts) {
    const { ok, text } = await attempt(client, a);
    assert.equal(ok, false, `${kind}: "${a.name}" should be refused, got: ${text}`);
    const why = a.bash
      ? `This command ran in the sandbox of the ${kind} policy of Crew alpha`
      : `Refused by the ${kind} policy of Crew alpha`;
    assert.ok(text.includes(why), `${kind}: "${a.name}" says why: ${text}`);
    assert.match(text, /The person who runs this app can change it/);
  }
}

/** Every attempt works: each reaches its target when nothing stops it. */
async function assertAllWork(client: Client, attempts: readonly Attempt[]): Promise<void> {
  for (const a of attempts) {
    const { ok, text } = await attempt(client, a);
    assert.equal(ok, true, `machine: "${a.name}" should work, got: ${text}`);
  }
}

/** As the CLI does: the running server reads the access directory afresh on every call. */
async function setPolicy(stateDir: string, kind: 'machine' | 'place' | 'strict', network: readonly string[] = []): Promise<void> {
  const access = new AccessDirectory(stateDir);
  await access.setPlacePolicy('Crew/alpha', kind);
  if (kind !== 'machine') await access.setPlaceNetwork('Crew/alpha', network);
}
