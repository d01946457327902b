import type { HostStatus } from '../../common/api/host-status.js';
import type { AuthMode, ServerInfo } from '../../common/api/server.js';
import { isLoopbackHost, type Config } from '../config.js';

/** The endpoint's state with its configured address and sign-in mode: what the page's Server and Agent access screens show. */
export function serverInfo(
  config: Pick<Config, 'host' | 'port' | 'auth' | 'jwt' | 'publicUrl'>,
  status: HostStatus,
  now: Pick<ServerInfo, 'runningCommands' | 'agentSessions'>,
): ServerInfo {
  return {
    ...status,
    runningCommands: now.runningCommands,
    agentSessions: now.agentSessions,
    listen: { host: config.host, port: config.port },
    ...(config.publicUrl && { publicUrl: config.publicUrl }),
    reachable: isLoopbackHost(config.host) ? 'this-machine' : 'network',
    authMode: authMode(config),
  };
}

function authMode({ auth, jwt }: Pick<Config, 'auth' | 'jwt'>): AuthMode {
  if (!auth) return { required: false };
  const external: Array<'secret' | 'public-key' | 'jwks'> = [];
  if (jwt.secret) external.push('secret');
  if (jwt.publicKeyPem) external.push('public-key');
  if (jwt.jwksUrl) external.push('jwks');
  return { required: true, external };
}
