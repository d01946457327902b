import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { revokeClient, signedInClientsQuery, type SignedInClientInfo } from '../../api/agent-sign-ins';
import { ErrorNote } from '../../ui/ErrorNote';
import { RevokeButton } from './RevokeButton';
import { Initial } from '../../ui/Initial';

const timeWords = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });

/** Clients the owner let in with OAuth, newest first, each with Revoke (which ends its sessions at once). */
export function SignedInClients({ onRevoked }: { onRevoked: (message: string) => void }) {
  const clients = useQuery(signedInClientsQuery);
  if (clients.isPending) {
    return (
      <p className="muted" role="status">
        Loading signed-in clients…
      </p>
    );
  }
  if (clients.isError)
    return (
      <ErrorNote
        error={clients.error}
        title="The signed-in clients could not be loaded."
        onRetry={() => void clients.refetch()}
        retrying={clients.isFetching}
      />
    );
  const live = clients.data.clients.filter((c) => !c.revokedAt);
  const revoked = clients.data.clients.length - live.length;
  return (
    <>
      {live.length ? (
        <ul className="rows" aria-label="Signed-in clients">
          {live.map((c) => (
            <ClientRow key={c.id} client={c} onRevoked={onRevoked} />
          ))}
        </ul>
      ) : (
        <p className="empty">No client has signed in. Clients that sign in by themselves appear here once you allow them.</p>
      )}
      {revoked > 0 && (
        <p className="hint">
          {revoked === 1 ? '1 revoked client is' : `${revoked} revoked clients are`} not shown: they must sign in again.
        </p>
      )}
    </>
  );
}

function ClientRow({ client: c, onRevoked }: { client: SignedInClientInfo; onRevoked: (message: string) => void }) {
  const queries = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeClient(c.id),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['agent-clients'] });
      onRevoked(`${c.name} was revoked: its sessions ended and it must sign in again.`);
    },
  });
  return (
    <li className="row-wrap">
      <div className="row">
        <Initial name={c.name} />
        <div className="row-main">
          <div className="row-title">
            <span className="name">{c.name}</span>
            <span className="state state-connected">Signed in</span>
          </div>
          <div className="row-detail">
            {c.place.label} · allowed {timeWords(c.approvedAt)} · last used {c.lastUsedAt ? timeWords(c.lastUsedAt) : 'never'}
          </div>
          <div className="row-detail">
            Client <code>{c.clientId}</code>
            {c.redirectUri && (
              <>
                {' '}
                · answers to <code>{c.redirectUri}</code>
              </>
            )}
          </div>
        </div>
        <div className="row-actions">
          <RevokeButton name={c.name} question={<>Revoke? Its sessions end at once.</>} revoke={revoke} />
        </div>
      </div>
      {revoke.isError && <ErrorNote error={revoke.error} title={`${c.name} was not revoked.`} />}
    </li>
  );
}
