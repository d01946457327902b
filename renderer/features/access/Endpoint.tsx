import type { ServerInfo } from '../../api/server';
import { CopyLine } from '../../ui/CopyButton';
import { authWords, mcpUrl } from '../server/server-words';
import '../server/server.css';

/** Where agents connect and how they sign in; while the server is not running, that and what to do. */
export function Endpoint({ info }: { info: ServerInfo }) {
  const url = mcpUrl(info);
  return (
    <dl className="facts endpoint">
      <dt>MCP URL</dt>
      <dd>
        {url ? (
          <CopyLine text={url} label="the MCP URL" />
        ) : (
          <span className="muted">Known once the server runs (it picks a free port when it starts).</span>
        )}
        {info.state !== 'running' && (
          <p className="note note-info endpoint-down">
            <span>
              {info.state === 'failed'
                ? `The server could not start: ${info.error}`
                : `The server is ${info.state === 'stopped' ? 'stopped' : info.state === 'starting' ? 'starting' : 'stopping'}, so agents cannot connect now.`}{' '}
              Start it on the <a href="#server">Server</a> screen or from the tray icon.
            </span>
          </p>
        )}
      </dd>
      <dt>Sign-in</dt>
      <dd>{authWords(info.authMode)}</dd>
    </dl>
  );
}
