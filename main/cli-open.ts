import { spawn } from 'node:child_process';
import { ConfigError, stateDirFrom } from './config.js';
import { findRunningServer } from './running-server.js';
import { PRODUCT_NAME } from './version.js';

/** A fresh one-time link to the running server's page (or, in the desktop app, its window). */
export async function openCommand(env: NodeJS.ProcessEnv): Promise<number> {
  const stateDir = stateDirFrom(env);
  const notRunning = `No ${PRODUCT_NAME} server is running on the state dir ${stateDir}. Start it with: ${PRODUCT_NAME}`;
  const server = await findRunningServer(stateDir);
  if (!server) throw new ConfigError(notRunning);
  let answer: { url?: string; expiresInSeconds?: number; window?: boolean };
  try {
    const response = await fetch(`${server.controlUrl}/api/open`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.adminToken}` },
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    answer = (await response.json()) as typeof answer;
  } catch (error) {
    throw new ConfigError(`${notRunning} (the server recorded there did not answer: ${(error as Error).message}).`);
  }
  if (answer.window) {
    process.stdout.write('The desktop app shows its window.\n');
    return 0;
  }
  const minutes = Math.round((answer.expiresInSeconds ?? 0) / 60);
  process.stdout.write(`Open this link in a browser on this machine; it signs you in once, within ${minutes} minutes: ${answer.url}\n`);
  const browser = env.BROWSER;
  if (browser) {
    const child = spawn(browser, [answer.url!], { detached: true, stdio: 'ignore' });
    child.on('error', (error) => process.stderr.write(`Could not start $BROWSER (${browser}): ${error.message}\n`));
    child.unref();
  }
  return 0;
}
