import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { placeConnectionsQuery } from '../../api/connections';
import type { Place } from '../../api/connections';
import { useAnnouncement } from '../../ui/useAnnouncement';
import { ErrorNote } from '../../ui/ErrorNote';
import { AvailableList } from './AvailableList';
import { ConnectedList } from './ConnectedList';
import { ToolSearchSetting } from './ToolSearchSetting';
import { PlacePolicyPanel } from './PlacePolicyPanel';
import { useConnectFlow } from './useConnectFlow';

/**
 * A place's MCP connections, one page: the rule in one line, Connected (whose login, state, Sign
 * in, Remove), then Available (search, sign-in groups, connectors, a server that is not listed).
 */
export function PlaceMcpSection({ place }: { place: Place }) {
  // The latest outcome stays a while, then the page is quiet again.
  const [message, announce] = useAnnouncement();
  const flow = useConnectFlow(place.root, announce);
  const connections = useQuery(placeConnectionsQuery(place.root));

  // A sign-in finished, was denied or failed in the browser: the connection is no longer waiting for one.
  const { settle, pending } = flow;
  const list = connections.data?.connections;
  const loadedAt = connections.dataUpdatedAt;
  const announced = useRef(announce);
  announced.current = announce;
  useEffect(() => {
    if (!list || !pending.length) return;
    // Only a list loaded after the page started waiting knows how that sign-in went.
    const ended = pending
      .filter((p) => p.startedAt < loadedAt)
      .flatMap((p) => list.filter((c) => c.name === p.name && (c.state !== 'sign-in' || c.signIn?.state !== 'pending')));
    if (!ended.length) return;
    settle(new Set(ended.map((c) => c.name)));
    const names = ended.filter((c) => c.state === 'connected').map((c) => c.displayName);
    const failed = ended.filter((c) => c.signIn?.state === 'failed').map((c) => c.displayName);
    const said = [
      names.length ? `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} connected.` : '',
      failed.length ? `The sign-in to ${failed.join(', ')} failed; see why in Connected.` : '',
    ]
      .join(' ')
      .trim();
    if (said) announced.current(said);
  }, [list, loadedAt, pending, settle]);

  const canEdit = connections.data?.place.canEdit ?? place.canEdit;

  return (
    <div className="section">
      <header className="section-header">
        <h1>Connections</h1>
        <p className="muted">MCP servers the agents of {place.label} can use.</p>
        {connections.data && <PlacePolicyPanel key={place.root} place={place} policy={connections.data.policy} announce={announce} />}
      </header>

      <div className="live" role="status" aria-live="polite">
        {message}
      </div>

      {connections.data && <p className="rule">{connections.data.rule}</p>}

      <section aria-labelledby="connected-heading" className="group">
        <h2 id="connected-heading" tabIndex={-1}>
          Connected
        </h2>
        {connections.isPending ? (
          <p className="muted" role="status">
            Loading connections…
          </p>
        ) : connections.isError ? (
          <ErrorNote
            error={connections.error}
            title="The connections could not be loaded."
            onRetry={() => void connections.refetch()}
            retrying={connections.isFetching}
          />
        ) : (
          <ConnectedList root={place.root} connections={connections.data.connections} flow={flow} announce={announce} />
        )}
      </section>

      <section aria-labelledby="available-heading" className="group">
        <h2 id="available-heading">Available</h2>
        {canEdit ? (
          <AvailableList
            root={place.root}
            policy={connections.data?.policy.kind}
            connections={connections.data?.connections ?? []}
            flow={flow}
            announce={announce}
          />
        ) : (
          <p className="note">You can see this place’s connections, but only its editors can add them.</p>
        )}
      </section>

      <ToolSearchSetting place={place} />
    </div>
  );
}
