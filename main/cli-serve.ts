import { ConfigError, loadConfig, type Config, type ServeFlags } from './config.js';
import { LOGIN_LINK_TTL_MS } from './auth/admin-access.js';
import { howToEnter } from './machine/sandbox/bubblewrap-check.js';
import { enforcerFor } from './machine/sandbox/sandbox-check.js';
import { defaultLimitValues, SandboxLimits } from './machine/sandbox/sandbox-limits.js';
import { describeMissing, nativeModules } from './native-modules.js';
import { PRODUCT_NAME } from './version.js';

export async function serve(flags: ServeFlags, env: NodeJS.ProcessEnv): Promise<number> {
  const config = loadConfig(flags, env);
  // The sandbox limits' probes run programs: started before the host's code loads, they run while it
  // does, and starting a program costs this process less before it has grown.
  const limits = SandboxLimits.open(defaultLimitValues(config.sandboxLimits), env);
  // The services await it; a failure before then is theirs to report, not an unhandled rejection.
  limits.catch(() => {});
  // The launcher's trial, for the same reason: the services say how sandboxed commands start once it has run.
  if (enforcerFor() === 'bubblewrap') void howToEnter(env);
  // Checked while the server starts; named after its start lines.
  const modules = nativeModules();
  const { Host } = await import('./host.js');
  const host = new Host(config, { env, limits });
  // A busy control port (or any other failure to listen) is the user's to fix: no stack trace.
  await host.open().catch((error: unknown) => {
    throw new ConfigError((error as Error).message);
  });
  const url = await host.start().catch(async (error: unknown) => {
    const status = host.status;
    await host.close();
    throw new ConfigError(status.state === 'failed' ? status.error : String(error));
  });
  // Listened for before anything else is awaited: a stop asked for from here on closes the host cleanly.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`${signal} received, stopping...\n`);
      // A second signal means "now": skip the clean shutdown.
      process.once(signal, () => process.exit(130));
      host.close().then(resolve, (error: unknown) => {
        process.stderr.write(`Stopping failed: ${(error as Error).message}\n`);
        process.exit(1);
      });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  const auth = config.auth ? `JWT; app tokens${externalKeys(config)}` : 'off (--no-auth, loopback only)';
  process.stdout.write(`${PRODUCT_NAME} listening on ${url} (auth: ${auth})\n`);
  process.stdout.write(
    `Manage connections, skills and agent access in a browser on this machine (this link signs you in once, within ${LOGIN_LINK_TTL_MS / 60_000} minutes; "${PRODUCT_NAME} open" makes a new one): ${await host.loginUrl()}\n`,
  );
  // While the first agent connects: its first tools/list then finds the code loaded. A failure here is the first use's to report.
  host.loadRemoteClient().catch(() => {});
  for (const line of describeMissing(await modules)) process.stderr.write(`${line}\n`);
  await stopped;
  return 0;
}

function externalKeys({ jwt }: Config): string {
  const sources = [jwt.secret && 'HS256 secret', jwt.publicKeyPem && 'public key', jwt.jwksUrl && 'JWKS'].filter(Boolean);
  return sources.length ? ` + ${sources.join(' + ')}` : '';
}
