import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { revokeToken, setTokenToolSearch, tokensQuery, type AgentToken, type ToolSearchMode } from '../../api/access';
import type { Place } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { focusNeighbour, neighbourOf } from '../../ui/keyboard';
import { RevokeButton } from './RevokeButton';
import { Initial } from '../../ui/Initial';
import { placeLabel } from '../server/server-words';

const dateWords = (iso: string) => new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

/** The app's tokens that still count (never the tokens themselves), newest first; revoked ones are gone for good and not listed. */
export function TokenList({ places, onRevoked }: { places: Place[]; onRevoked: (token: AgentToken) => void }) {
  const tokens = useQuery(tokensQuery);
  if (tokens.isPending) {
    return (
      <p className="muted" role="status">
        Loading tokens…
      </p>
    );
  }
  if (tokens.isError)
    return (
      <ErrorNote
        error={tokens.error}
        title="The tokens could not be loaded."
        onRetry={() => void tokens.refetch()}
        retrying={tokens.isFetching}
      />
    );
  const live = tokens.data.tokens.filter((t) => !t.revokedAt).reverse();
  const revoked = tokens.data.tokens.length - live.length;
  return (
    <>
      {live.length ? (
        <ul className="rows" aria-label="Tokens">
          {live.map((t) => (
            <TokenRow key={t.id} token={t} places={places} onRevoked={onRevoked} />
          ))}
        </ul>
      ) : (
        <p className="empty">No tokens yet. Create one above for each agent that should use this machine.</p>
      )}
      {revoked > 0 && (
        <p className="hint token-revoked-count">
          {revoked === 1 ? '1 revoked token is' : `${revoked} revoked tokens are`} not shown: agents using {revoked === 1 ? 'it' : 'them'}{' '}
          are refused.
        </p>
      )}
    </>
  );
}

function TokenRow({ token: t, places, onRevoked }: { token: AgentToken; places: Place[]; onRevoked: (token: AgentToken) => void }) {
  const client = useQueryClient();
  const rowRef = useRef<HTMLLIElement>(null);
  const revoke = useMutation({
    mutationFn: () => revokeToken(t.id),
    // The row that takes this one's place keeps the keyboard's place; found while this row is there (ConnectedList).
    onMutate: () => neighbourOf(rowRef.current),
    onSuccess: async (_revoked, _vars, neighbour) => {
      await client.invalidateQueries({ queryKey: ['tokens'] });
      onRevoked(t);
      focusNeighbour(neighbour, 'tokens-heading');
    },
  });

  const toolSearch = useMutation({
    mutationFn: (mode: ToolSearchMode) => setTokenToolSearch(t.id, mode),
    onSuccess: () => client.invalidateQueries({ queryKey: ['tokens'] }),
  });

  const expired = t.expiresAt !== undefined && Date.parse(t.expiresAt) <= Date.now();
  const place = t.workspacePath === undefined ? 'This machine or the place the URL names' : placeLabel(t.workspacePath, places);
  const expiry = t.expiresAt === undefined ? 'never expires' : `${expired ? 'expired' : 'expires'} ${dateWords(t.expiresAt)}`;

  return (
    <li className="row-wrap" ref={rowRef} tabIndex={-1} aria-label={`Token ${t.name}`}>
      <div className="row">
        <Initial name={t.name} />
        <div className="row-main">
          <div className="row-title">
            <span className="name">{t.name}</span>
            <span className={`state ${expired ? 'state-paused' : 'state-connected'}`}>{expired ? 'Expired' : 'Active'}</span>
          </div>
          <div className="row-detail">
            {place} · created {dateWords(t.createdAt)} · {expiry} · tool search {t.toolSearch ?? 'as its place'}
          </div>
        </div>
        <div className="row-actions">
          <select
            aria-label={`Tool search for ${t.name}`}
            value={t.toolSearch ?? 'auto'}
            disabled={toolSearch.isPending}
            onChange={(e) => toolSearch.mutate(e.target.value as ToolSearchMode)}
          >
            <option value="auto">Tool search: as its place</option>
            <option value="on">Tool search: on</option>
            <option value="off">Tool search: off</option>
          </select>
          <RevokeButton name={t.name} question={<>Revoke? Agents using it are refused at once.</>} revoke={revoke} />
        </div>
      </div>
      {revoke.isError && <ErrorNote error={revoke.error} title={`${t.name} was not revoked.`} />}
      {toolSearch.isError && <ErrorNote error={toolSearch.error} title={`Tool search for ${t.name} was not changed.`} />}
    </li>
  );
}
