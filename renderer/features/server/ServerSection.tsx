import { useQuery } from '@tanstack/react-query';
import { placesQuery } from '../../api/connections';
import { serverQuery } from '../../api/server';
import { ErrorNote } from '../../ui/ErrorNote';
import { useAnnouncement } from '../../ui/useAnnouncement';
import { ActivityTable } from './ActivityTable';
import { ServerStatus } from './ServerStatus';
import './server.css';

/** The Server screen: the agent endpoint's state with Start/Stop, and what agents did lately. */
export function ServerSection() {
  const server = useQuery(serverQuery);
  const places = useQuery(placesQuery);
  const [message, setMessage] = useAnnouncement();

  return (
    <div className="section">
      <header className="section-header">
        <h1>Server</h1>
        <p className="muted">The MCP endpoint agents connect to, and the tool calls they made.</p>
      </header>
      <p className="live" role="status">
        {message}
      </p>
      {server.isPending ? (
        <p className="muted" role="status">
          Loading the server’s state…
        </p>
      ) : server.isError ? (
        <ErrorNote
          error={server.error}
          title="The server’s state could not be loaded."
          onRetry={() => void server.refetch()}
          retrying={server.isFetching}
        />
      ) : (
        <ServerStatus info={server.data} announce={setMessage} />
      )}
      <ActivityTable places={places.data?.places ?? []} />
    </div>
  );
}
