import { serverInfo, type StatusAnswer } from '../common/api/server.js';
import { stateDirFrom } from './config.js';
import { printJson } from './cli-json.js';
import { checkNativeModules, describeMissing } from './native-modules.js';
import { runningServer } from './server-client.js';
import { PRODUCT_NAME } from './version.js';

/** Whether a server runs on this state dir, where agents and the page reach it, and the optional native modules it lacks. */
export async function statusCommand(json: boolean, env: NodeJS.ProcessEnv): Promise<number> {
  const stateDir = stateDirFrom(env);
  const running = await runningServer(stateDir);
  const info = running && (await running.call('GET', '/server', serverInfo));
  // The running server's own finding (its install may be another, the desktop app's); else this command's.
  const fromServer = info?.nativeModules;
  const status: StatusAnswer = {
    stateDir,
    ...(running && info && { server: { ...info, pid: running.server.pid, pageUrl: running.server.controlUrl } }),
    nativeModules: fromServer ?? (await checkNativeModules({ env })),
    nativeModulesCheckedBy: fromServer ? 'server' : 'this command',
  };
  if (json) return printJson(status);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const server = status.server;
  if (!server) out(`No server runs on the state dir ${stateDir}. Start one with: ${PRODUCT_NAME}`);
  else {
    out(
      `A server runs on the state dir ${stateDir} (pid ${server.pid}); its page is at ${server.pageUrl} ("${PRODUCT_NAME} open" signs you in).`,
    );
    const endpoint =
      server.state === 'running'
        ? `listening on ${server.url} (auth ${server.auth ? 'on' : 'off'}; ${server.agentSessions} agent sessions, ${server.runningCommands} commands running)`
        : server.state === 'failed'
          ? `failed: ${server.error}`
          : server.state;
    out(`Agent endpoint: ${endpoint}.`);
  }
  const missing = describeMissing(status.nativeModules);
  const by = status.nativeModulesCheckedBy === 'server' ? 'as the server found them' : 'in this install';
  if (missing.length === 0) out(`Optional native modules (${by}): ${status.nativeModules.map((m) => m.name).join(' and ')} loaded.`);
  for (const line of missing) out(line);
  return 0;
}
