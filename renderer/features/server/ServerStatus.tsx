import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { serverQuery, startServer, stopServer, type ServerInfo } from '../../api/server';
import { ConfirmInline } from '../../ui/ConfirmInline';
import { CopyLine } from '../../ui/CopyButton';
import { ErrorNote } from '../../ui/ErrorNote';
import { addressWords, authWords, mcpUrl, reachWords } from './server-words';

const STATE_WORDS: Record<ServerInfo['state'], string> = {
  running: 'Running',
  starting: 'Starting…',
  stopping: 'Stopping…',
  stopped: 'Stopped',
  failed: 'Could not start',
};

/** The agent endpoint: its state in words and colour, Start/Stop, where it listens and how agents sign in. */
export function ServerStatus({ info, announce }: { info: ServerInfo; announce: (message: string) => void }) {
  const client = useQueryClient();
  const toggle = useMutation({
    mutationFn: () => (info.state === 'running' ? stopServer() : startServer()),
    onSuccess: (next) => {
      client.setQueryData(['server'], next);
      // A failed start speaks for itself: its reason is an alert in the card.
      announce(
        next.state === 'running'
          ? `The server is running on ${next.url}.`
          : next.state === 'stopped'
            ? 'The server is stopped. Agents cannot connect.'
            : '',
      );
    },
  });
  // Stop ends the agents' sessions and running commands: with agents connected, it asks first and says how many.
  const [confirming, setConfirming] = useState<Pick<ServerInfo, 'agentSessions' | 'runningCommands'> | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const askOrStop = async () => {
    const now = await client.fetchQuery({ ...serverQuery, staleTime: 0 }).catch(() => info);
    client.setQueryData(['server'], now);
    if (now.state === 'running' && (now.agentSessions > 0 || now.runningCommands > 0))
      setConfirming({ agentSessions: now.agentSessions, runningCommands: now.runningCommands });
    else toggle.mutate();
  };
  const url = mcpUrl(info);
  const busy = toggle.isPending || info.state === 'starting' || info.state === 'stopping';
  const running = info.state === 'running';

  return (
    <section className="panel server-status" aria-labelledby="server-state-heading">
      <div className="server-state-line">
        <h2 id="server-state-heading" className="server-state-heading">
          <span className="sr-only">The MCP server: </span>
          <span className={`state server-state-${info.state}`}>{STATE_WORDS[info.state]}</span>
        </h2>
        <span className="server-state-detail">
          {running
            ? 'Agents can connect.'
            : info.state === 'failed'
              ? 'Agents cannot connect.'
              : info.state === 'stopped'
                ? 'Agents cannot connect until you start it.'
                : ''}
        </span>
        {confirming !== null && running ? (
          <ConfirmInline
            label="Stop the server?"
            question={stopQuestion(confirming)}
            yes="Yes, stop"
            working="Stopping…"
            pending={toggle.isPending}
            onYes={() => toggle.mutate(undefined, { onSettled: () => setConfirming(null) })}
            onNo={() => {
              setConfirming(null);
              requestAnimationFrame(() => buttonRef.current?.focus());
            }}
          />
        ) : (
          <button
            type="button"
            ref={buttonRef}
            className={running ? 'button' : 'button primary'}
            onClick={() => (running ? void askOrStop() : toggle.mutate())}
            disabled={busy}
          >
            {toggle.isPending ? (running ? 'Stopping…' : 'Starting…') : running ? 'Stop server' : 'Start server'}
          </button>
        )}
      </div>
      {info.state === 'failed' && (
        <p className="note note-error" role="alert">
          {info.error} Then press Start server.
        </p>
      )}
      {running && <p className="hint">Stopping ends the agents’ sessions and any commands they are running.</p>}
      <dl className="facts">
        <dt>MCP URL</dt>
        <dd>
          {url ? <CopyLine text={url} label="the MCP URL" /> : <span className="muted">Start the server to see it.</span>}
          {url && !running && <span className="muted small"> (once the server runs)</span>}
        </dd>
        <dt>Address</dt>
        <dd>
          <span>{addressWords(info)}</span>
          <div className="muted small">{reachWords(info)}</div>
        </dd>
        <dt>Sign-in</dt>
        <dd>{authWords(info.authMode)}</dd>
      </dl>
      {toggle.isError && <ErrorNote error={toggle.error} title={running ? 'The server was not stopped.' : 'The server was not started.'} />}
    </section>
  );
}

/** What stopping ends, in words: the agents' sessions, and their commands if any run. */
function stopQuestion({
  agentSessions: sessions,
  runningCommands: commands,
}: Pick<ServerInfo, 'agentSessions' | 'runningCommands'>): string {
  const agents = sessions === 1 ? '1 agent session is' : `${sessions} agent sessions are`;
  const running = commands === 0 ? '' : commands === 1 ? ' and 1 command is running' : ` and ${commands} commands are running`;
  return `Stop? ${agents} open${running}; stopping ends ${sessions + commands === 1 ? 'it' : 'them'}.`;
}
