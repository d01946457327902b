import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { canonicalHost } from '../../places/network-allow-list.js';

let npmRegistry: Promise<string | undefined> | undefined;

/**
 * The hosts a launcher installs packages from on this machine, as its own configuration says
 * (npm's `registry` setting, uv's and pip's index variables): what a server run with npx or uvx
 * needs on the allow-list under strict. None when the launcher is neither or says nothing.
 */
export async function installHosts(command: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (command === 'npx') {
    npmRegistry ??= promisify(execFile)('npm', ['config', 'get', 'registry'], { timeout: 10_000, env })
      .then(({ stdout }) => hostOf(stdout.trim()))
      .catch(() => undefined);
    const host = await npmRegistry;
    return host ? [host] : [];
  }
  if (command === 'uvx') {
    const index = env.UV_DEFAULT_INDEX ?? env.UV_INDEX_URL ?? env.PIP_INDEX_URL;
    const host = index ? hostOf(index) : undefined;
    return host ? [host] : [];
  }
  return [];
}

function hostOf(url: string): string | undefined {
  try {
    return canonicalHost(new URL(url).hostname);
  } catch {
    return undefined;
  }
}
