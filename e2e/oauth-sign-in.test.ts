import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { enterWorkspace, freePort, startHost, textOf, waitFor, type HostFixture } from '../test/support/host-fixture.js';
import { finishSignIn, MemoryOAuthProvider, openAuthorization, pollWait, startSignIn } from '../test/support/oauth-client.js';

// The built bin, as a headless owner runs it next to the server.
const CLI = fileURLToPath(new URL('../dist/main/cli.js', import.meta.url));
const REDIRECT = 'http://127.0.0.1:8766/callback';
const MCP_REMOTE = fileURLToPath(new URL('../node_modules/mcp-remote/dist/proxy.js', import.meta.url));
const INSPECTOR = fileURLToPath(
  new URL('../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url),
);
const STAND_IN_BROWSER = fileURLToPath(new URL('../test/support/stand-in-browser.mjs', import.meta.url));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built CLI against the host's state dir, as the machine's owner runs it next to the server. */
function runCli(fx: HostFixture, workspaceDir: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        WORKSPACE_STATE_DIR: fx.stateDir,
        WORKSPACE_CWD: workspaceDir,
        WORKSPACE_SECRET_STORE: 'file',
        WORKSPACE_REGISTRY_URL: '',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The SDK client signs in; the owner answers from the terminal with approve / deny, and ends it with clients revoke. */
describe('agent sign-in answered from the CLI', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;

  before(async () => {
    workspace = await enterWorkspace('pw-oauth-cli-', ['Crew/alpha']);
    fx = await startHost();
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
  });

  const cli = (args: string[]) => runCli(fx, workspace.dir, args);

  /** Starts the SDK's sign-in for the place Crew/alpha; returns the waiting page and the code the owner sees. */
  async function begin(provider: MemoryOAuthProvider): Promise<{ waitUrl: string; code: string }> {
    const waitUrl = await openAuthorization(await startSignIn(provider, `${fx.url}?workspace_path=Crew/alpha`));
    const page = await (await fetch(waitUrl)).text();
    const code = /[A-Z2-9]{4}-[A-Z2-9]{4}/.exec(page)![0];
    const listed = await cli(['approve']);
    assert.equal(listed.code, 0, listed.stderr);
    // Where it came from and when it asked, as the page says: two clients of one name differ there.
    assert.match(
      listed.stdout,
      new RegExp(
        `${code}  ${provider.clientName}  place: Crew alpha  answer goes to ${REDIRECT}  asked \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  from 127\\.0\\.0\\.1  expires `,
      ),
    );
    return { waitUrl, code };
  }

  it('approves with "approve CODE", after which the client calls bash in the approved place', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, 'CLI-approved agent');
    const { waitUrl, code } = await begin(provider);
    const approved = await cli(['approve', code.toLowerCase()]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /Approved CLI-approved agent .* in Crew alpha/);
    const answer = (await pollWait(waitUrl))!;
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    await finishSignIn(provider, `${fx.url}?workspace_path=Crew/alpha`, answer.searchParams.get('code')!);

    const client = new Client({ name: 'cli-approved', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(fx.url), { authProvider: provider });
    await client.connect(transport);
    assert.match(textOf(await client.callTool({ name: 'bash', arguments: { command: 'echo via-oauth' } })), /via-oauth/);
    await waitFor(
      async () =>
        /"client":"CLI-approved agent","place":"Crew\/alpha"/.test(await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')),
      5_000,
      'the audit record',
    );

    const listed = await cli(['clients', 'list']);
    const line = listed.stdout.split('\n').find((l) => l.includes('CLI-approved agent'))!;
    assert.match(line, /place: Crew alpha/);
    // Told apart from any other client of that name: its id and where its answer went.
    assert.ok(line.includes(`client ${provider.client!.client_id}  answers to ${REDIRECT}`), line);
    const id = line.split(' ')[0]!;
    const revoked = await cli(['clients', 'revoke', id]);
    assert.equal(revoked.code, 0, revoked.stderr);
    await assert.rejects(client.callTool({ name: 'bash', arguments: { command: 'echo after-revoke' } }));
    assert.match((await cli(['clients', 'list'])).stdout, new RegExp(`${id} .*revoked`));
    await client.close().catch(() => {});
  });

  it('refuses with "deny CODE": the browser goes back with access_denied', async () => {
    const provider = new MemoryOAuthProvider(REDIRECT, 'CLI-denied agent');
    const { waitUrl, code } = await begin(provider);
    const denied = await cli(['deny', code]);
    assert.equal(denied.code, 0, denied.stderr);
    const answer = (await pollWait(waitUrl))!;
    assert.equal(answer.searchParams.get('error'), 'access_denied');
    assert.equal(answer.searchParams.get('state'), provider.sentState);
    const late = await cli(['approve', code]);
    assert.notEqual(late.code, 0);
    assert.match(late.stderr, /already denied/);
  });
});

/**
 * oauth4webapi is a strict client: the protected resource metadata must name the resource exactly
 * as the URL it was asked for (RFC 9728 §3.3), the issuer exactly as the resource names it (RFC
 * 8414 §3.3), and everything is checked by the letter. It signs in for the place named in the MCP
 * URL, as docs/agent-sign-in.md shows (`/mcp?workspace_path=Crew/alpha`), starting from the 401 as MCP clients do.
 */
describe('oauth4webapi, a strict client, signing in for a place named in the URL', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  // Loopback over plain http, as every test server here.
  const insecure = { [oauth.allowInsecureRequests]: true } as const;

  before(async () => {
    workspace = await enterWorkspace('pw-oauth4webapi-', ['Crew/alpha']);
    fx = await startHost();
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
  });

  it('discovers from the 401, registers, signs in with PKCE and the resource, works in Crew/alpha, refreshes and signs out', async () => {
    const resource = new URL(`${fx.url}?workspace_path=Crew/alpha`);
    const challenge = await oauth
      .protectedResourceRequest(
        'not-a-token',
        'POST',
        resource,
        new Headers({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }),
        '{}',
        insecure,
      )
      .then(
        () => assert.fail('a request without a valid token was answered'),
        (error: unknown) => {
          assert.ok(error instanceof oauth.WWWAuthenticateChallengeError, String(error));
          return error.cause[0]!;
        },
      );
    const metadataUrl = new URL(String(challenge.parameters.resource_metadata));
    const rs = await oauth.processResourceDiscoveryResponse(resource, await fetch(metadataUrl));
    assert.equal(rs.resource, resource.href);
    // The same document as the client would find it by itself from the resource URL.
    assert.equal(
      (await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure))).resource,
      resource.href,
    );

    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }));
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: 'Strict agent',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
        insecure,
      ),
    );
    const client: oauth.Client = { client_id: registered.client_id };

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = new URL(as.authorization_endpoint!);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: resource.href,
    })) {
      authorize.searchParams.set(name, value);
    }
    const waitUrl = await openAuthorization(authorize);
    const listed = await runCli(fx, workspace.dir, ['approve']);
    const line = listed.stdout.split('\n').find((l) => l.includes('Strict agent'))!;
    assert.match(line, /place: Crew alpha/);
    const approved = await runCli(fx, workspace.dir, ['approve', /^[A-Z2-9]{4}-[A-Z2-9]{4}/.exec(line)![0]]);
    assert.equal(approved.code, 0, approved.stderr);

    const callback = oauth.validateAuthResponse(as, client, (await pollWait(waitUrl))!, state);
    const extra = { ...insecure, additionalParameters: { resource: resource.href } };
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callback, REDIRECT, verifier, extra),
    );

    const mcp = new Client({ name: 'strict-agent', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(resource, { requestInit: { headers: { Authorization: `Bearer ${tokens.access_token}` } } }),
    );
    assert.match(textOf(await mcp.callTool({ name: 'bash', arguments: { command: 'echo strict-$((2 * 3))' } })), /strict-6/);
    await mcp.close();
    await waitFor(
      async () =>
        /"client":"Strict agent","place":"Crew\/alpha"/.test(await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')),
      5_000,
      'the audit record',
    );

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, extra),
    );
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure));
    const refused = await oauth
      .protectedResourceRequest(
        refreshed.access_token,
        'POST',
        resource,
        new Headers({ 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }),
        '{}',
        insecure,
      )
      .then(
        () => assert.fail('a signed-out client was answered'),
        (error: oauth.WWWAuthenticateChallengeError) => error.cause[0]!.parameters.error_description,
      );
    assert.match(String(refused), /signed out by the client/);
  });
});

/**
 * mcp-remote (a stdio to Streamable HTTP proxy that many desktop clients launch) signs in as it
 * does on a desktop: it registers, opens the authorization URL through the \`open\` package (its
 * xdg-open, which on a machine without a desktop hands the URL to $BROWSER) and waits on its own
 * loopback port. $BROWSER is the stand-in browser, which follows the redirects and the waiting
 * page's reloads to that port; the owner approves from the CLI meanwhile.
 */
describe('mcp-remote signing in', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let home: string;

  before(async () => {
    workspace = await enterWorkspace('pw-oauth-remote-', ['Crew/alpha']);
    fx = await startHost();
    home = await mkdtemp(join(tmpdir(), 'pw-remote-home-'));
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
    await rm(home, { recursive: true, force: true });
  });

  it('signs in once the owner approves with "approve CODE", then lists the tools and runs bash over stdio', async () => {
    const browserLog = join(home, 'browser.log');
    const callbackPort = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, `${fx.url}?workspace_path=Crew/alpha`, String(callbackPort)],
      // No desktop: no DISPLAY, no session bus, so xdg-open falls back to $BROWSER. The temp HOME
      // keeps mcp-remote's registration and tokens (~/.mcp-auth) out of the real one.
      env: { PATH: process.env.PATH ?? '', HOME: home, BROWSER: STAND_IN_BROWSER, STAND_IN_BROWSER_LOG: browserLog },
      stderr: 'pipe',
    });
    let proxyLog = '';
    transport.stderr?.on('data', (d: Buffer) => (proxyLog += d.toString()));
    const client = new Client({ name: 'through-mcp-remote', version: '1.0.0' });
    const connected = client.connect(transport);
    try {
      // The owner sees the request mcp-remote started, with its code, and approves it.
      let code = '';
      await waitFor(
        async () => {
          const listed = await runCli(fx, workspace.dir, ['approve']);
          const line = listed.stdout.split('\n').find((l) => l.includes('MCP CLI Proxy') && l.includes('place: Crew alpha'));
          code = /^[A-Z2-9]{4}-[A-Z2-9]{4}/.exec(line ?? '')?.[0] ?? '';
          return code !== '';
        },
        30_000,
        "mcp-remote's sign-in request",
      ).catch((error: Error) => assert.fail(`${error.message}; mcp-remote said:\n${proxyLog}`));
      assert.match(proxyLog, /Please authorize this client by visiting/);
      const approved = await runCli(fx, workspace.dir, ['approve', code]);
      assert.equal(approved.code, 0, approved.stderr);

      await connected;
      const tools = await client.listTools();
      assert.ok(
        tools.tools.some((t) => t.name === 'bash'),
        JSON.stringify(tools.tools.map((t) => t.name)),
      );
      const ran = await client.callTool({ name: 'bash', arguments: { command: 'echo "through $((40 + 2))"' } });
      assert.match(textOf(ran), /through 42/);
      await waitFor(
        async () =>
          /"client":"MCP CLI Proxy","place":"Crew\/alpha"/.test(await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')),
        5_000,
        'the audit record',
      );

      // The browser went from the authorization URL through the waiting page to mcp-remote's callback.
      const visited = await readFile(browserLog, 'utf8');
      assert.match(visited, /GET http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
      assert.match(visited, /GET http:\/\/127\.0\.0\.1:\d+\/oauth\/wait\//);
      assert.match(visited, new RegExp(`GET http://localhost:${callbackPort}/oauth/callback\\?state=[^&]+&code=`));
      // Its registration and tokens went to the temp HOME.
      const stored = await readdir(join(home, '.mcp-auth'), { recursive: true });
      assert.ok(
        stored.some((f) => f.endsWith('_tokens.json')),
        stored.join(', '),
      );
      const signedIn = await runCli(fx, workspace.dir, ['clients', 'list']);
      assert.match(signedIn.stdout, /place: Crew alpha/);
    } finally {
      await client.close().catch(() => {});
    }
  });
});

/**
 * The MCP Inspector's CLI mode (`inspector --cli`, one method per run) signs in with its own
 * interactive OAuth: it registers, listens on --callback-url and opens the authorization URL with
 * the `open` package. Without a terminal it opens nothing unless MCP_AUTO_OPEN_ENABLED=true, which
 * this test sets; $BROWSER is the stand-in browser again. With MCP_INSPECTOR_SECRET_STORE=file the
 * tokens it got are kept in the temp HOME (~/.mcp-inspector), and a second run uses them with
 * --stored-auth-only. The Inspector declares Node 22.19 or newer; this pinned version runs on this
 * project's Node 20 too, which this test is the check of.
 */
describe('the MCP Inspector CLI signing in', () => {
  let fx: HostFixture;
  let workspace: Awaited<ReturnType<typeof enterWorkspace>>;
  let home: string;

  before(async () => {
    workspace = await enterWorkspace('pw-oauth-inspector-', ['Crew/alpha']);
    fx = await startHost();
    home = await mkdtemp(join(tmpdir(), 'pw-inspector-home-'));
  });
  after(async () => {
    await fx.close();
    await workspace.leave();
    await rm(home, { recursive: true, force: true });
  });

  /** The tool names in `--method tools/list --format json` output. */
  function toolNames(stdout: string): string[] {
    return (JSON.parse(stdout) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
  }

  /** One `inspector --cli` run against the server with a clean environment and the temp HOME. */
  function inspector(args: string[]): { done: Promise<CliResult>; stderr: () => string } {
    const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        BROWSER: STAND_IN_BROWSER,
        STAND_IN_BROWSER_LOG: join(home, 'browser.log'),
        MCP_AUTO_OPEN_ENABLED: 'true',
        MCP_INSPECTOR_SECRET_STORE: 'file',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const done = new Promise<CliResult>((resolve, reject) => {
      const timer = setTimeout(() => child.kill(), 60_000);
      child.on('error', reject).on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    return { done, stderr: () => stderr };
  }

  it('signs in once the owner approves with "approve CODE" and lists the tools; a second run calls bash with the kept tokens', async () => {
    const server = `${fx.url}?workspace_path=Crew/alpha`;
    const callback = `http://127.0.0.1:${await freePort()}/oauth/callback`;
    const listing = inspector([server, '--method', 'tools/list', '--format', 'json', '--callback-url', callback]);
    let code = '';
    await waitFor(
      async () => {
        const listed = await runCli(fx, workspace.dir, ['approve']);
        const line = listed.stdout.split('\n').find((l) => l.includes('MCP Inspector') && l.includes(`answer goes to ${callback}`));
        code = /^[A-Z2-9]{4}-[A-Z2-9]{4}/.exec(line ?? '')?.[0] ?? '';
        return code !== '';
      },
      30_000,
      "the Inspector's sign-in request",
    ).catch((error: Error) => assert.fail(`${error.message}; the Inspector said:\n${listing.stderr()}`));
    const approved = await runCli(fx, workspace.dir, ['approve', code]);
    assert.equal(approved.code, 0, approved.stderr);

    const listed = await listing.done;
    assert.equal(listed.code, 0, listed.stderr);
    const names = toolNames(listed.stdout);
    assert.ok(names.includes('bash') && names.includes('read'), names.join(', '));
    assert.match(await readFile(join(home, 'browser.log'), 'utf8'), new RegExp(`GET ${callback}\\?state=[^&]+&code=`));

    // Its tokens went to the temp HOME, and the next run finds them there: --stored-auth-only
    // fails rather than sign in again.
    const kept = await readdir(join(home, '.mcp-inspector'), { recursive: true });
    assert.ok(kept.includes('secrets.json'), kept.join(', '));
    const ran = await inspector([
      server,
      '--method',
      'tools/call',
      '--tool-name',
      'bash',
      '--tool-arg',
      'command=echo "inspector $((6 * 7))"',
      '--format',
      'json',
      '--stored-auth-only',
    ]).done;
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /inspector 42/);
    await waitFor(
      async () =>
        /"client":"MCP Inspector","place":"Crew\/alpha"/.test(await readFile(join(fx.stateDir, 'audit.log'), 'utf8').catch(() => '')),
      5_000,
      'the audit record',
    );
    assert.equal((await runCli(fx, workspace.dir, ['approve'])).stdout.includes('MCP Inspector'), false, 'no second sign-in request');
  });

  it('uses the token form too: --header "Authorization: Bearer <agent token>"', async () => {
    const token = await fx.token('inspector-header');
    const listed = await inspector([
      fx.url,
      '--method',
      'tools/list',
      '--format',
      'json',
      '--header',
      `Authorization: Bearer ${token}`,
      '--stored-auth-only',
    ]).done;
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(toolNames(listed.stdout).includes('bash'), listed.stdout.slice(0, 300));
  });
});
