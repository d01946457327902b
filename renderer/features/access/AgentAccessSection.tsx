import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { toolSearchQuery, type CreatedToken } from '../../api/access';
import { serverQuery } from '../../api/server';
import type { Place } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { useAnnouncement } from '../../ui/useAnnouncement';
import { mcpUrl } from '../server/server-words';
import { ClientConfigs } from './ClientConfigs';
import { CreateTokenForm } from './CreateTokenForm';
import { Endpoint } from './Endpoint';
import { NewToken } from './NewToken';
import { SignedInClients } from './SignedInClients';
import { TokenList } from './TokenList';
import { WriteClientForm } from './WriteClientForm';
import { WaitingSignIns } from './WaitingSignIns';
import './access.css';

/** Agent access: the MCP URL and how agents sign in, their tokens, and configuration to paste into a client. */
export function AgentAccessSection({ places }: { places: Place[] }) {
  const server = useQuery(serverQuery);
  // The token exists in the page only until Done, a revoke of it, or leaving the screen.
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [message, setMessage] = useAnnouncement();
  const focusTokens = () => requestAnimationFrame(() => document.getElementById('tokens-heading')?.focus());
  const url = server.data && mcpUrl(server.data);
  // The configurations point at /mcp: an agent works in the new token's place, else This machine.
  const configPlace = created?.workspacePath ?? '';
  const toolSearch = useQuery(toolSearchQuery(configPlace));

  return (
    <div className="section">
      <header className="section-header">
        <h1>Agent access</h1>
        <p className="muted">An agent with a token can read and change files and run commands here, as the account that runs this app.</p>
      </header>
      <p className="live" role="status">
        {message}
      </p>

      <section className="group" aria-labelledby="endpoint-heading">
        <h2 id="endpoint-heading">Connect to</h2>
        {server.isPending ? (
          <p className="muted" role="status">
            Loading the server’s address…
          </p>
        ) : server.isError ? (
          <ErrorNote
            error={server.error}
            title="The server’s address could not be loaded."
            onRetry={() => void server.refetch()}
            retrying={server.isFetching}
          />
        ) : (
          <Endpoint info={server.data} />
        )}
      </section>

      {server.data?.authMode.required !== false && (
        <>
          <section className="group" aria-labelledby="waiting-heading">
            <h2 id="waiting-heading">Waiting sign-ins</h2>
            <WaitingSignIns places={places} onAnswered={setMessage} />
          </section>
          <section className="group" aria-labelledby="signed-in-heading">
            <h2 id="signed-in-heading">Signed-in clients</h2>
            <SignedInClients onRevoked={setMessage} />
          </section>
        </>
      )}

      <section className="group" aria-labelledby="tokens-heading">
        <h2 id="tokens-heading" tabIndex={-1}>
          Tokens
        </h2>
        {server.data && !server.data.authMode.required && (
          <p className="note note-info">
            The server accepts agents without a token right now (--no-auth); tokens count once it runs with sign-in again.
          </p>
        )}
        <CreateTokenForm
          places={places}
          onCreated={(token) => {
            setCreated(token);
            setMessage(`Token “${token.name}” created. Copy it now: it is shown only once.`);
          }}
        />
        {created && (
          <NewToken
            token={created}
            onDone={() => {
              setCreated(null);
              focusTokens();
            }}
          />
        )}
        <TokenList
          places={places}
          onRevoked={(token) => {
            if (created?.id === token.id) setCreated(null);
            setMessage(`Token “${token.name}” was revoked. Agents using it are refused from now on.`);
          }}
        />
      </section>

      <section className="group" aria-labelledby="write-client-heading">
        <h2 id="write-client-heading">Connect a client on this machine</h2>
        <p className="muted">Writes this server into the client’s own configuration file for you.</p>
        {server.isPending || server.isError ? (
          <p className="muted">This appears once the server’s address is loaded.</p>
        ) : (
          <WriteClientForm places={places} authRequired={server.data.authMode.required} onWritten={setMessage} />
        )}
      </section>

      <section className="group" aria-labelledby="clients-heading">
        <h2 id="clients-heading">Configure your client</h2>
        {server.isPending || server.isError ? (
          <p className="muted">The configurations appear once the server’s address is loaded.</p>
        ) : url ? (
          <ClientConfigs
            url={url}
            authRequired={server.data.authMode.required}
            token={created?.token}
            toolSearch={toolSearch.data && { ...toolSearch.data, place: toolSearch.data.label }}
          />
        ) : (
          <p className="empty">Start the server to get its URL; the configurations appear here.</p>
        )}
      </section>
    </div>
  );
}
