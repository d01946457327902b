import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { approveSignIn, denySignIn, waitingSignInsQuery, type WaitingAgentSignIn } from '../../api/agent-sign-ins';
import type { Place } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { Initial } from '../../ui/Initial';

/**
 * Clients asking to sign in, waiting for the owner: who, the code their browser shows, where the
 * answer goes, and the place (the owner may pick another). Nothing is allowed without a click here,
 * in the tray, or `approve CODE` on the machine.
 */
export function WaitingSignIns({ places, onAnswered }: { places: Place[]; onAnswered: (message: string) => void }) {
  const waiting = useQuery(waitingSignInsQuery);
  if (waiting.isPending) {
    return (
      <p className="muted" role="status">
        Looking for sign-ins…
      </p>
    );
  }
  if (waiting.isError)
    return (
      <ErrorNote
        error={waiting.error}
        title="The waiting sign-ins could not be loaded."
        onRetry={() => void waiting.refetch()}
        retrying={waiting.isFetching}
      />
    );
  if (waiting.data.requests.length === 0) {
    return (
      <p className="empty">
        No sign-ins waiting. When a client such as Claude Code signs in, its request shows here for you to allow or deny.
      </p>
    );
  }
  return (
    <ul className="rows" aria-label="Waiting sign-ins">
      {waiting.data.requests.map((r) => (
        <WaitingRow key={r.code} request={r} places={places} onAnswered={onAnswered} />
      ))}
    </ul>
  );
}

const timeOf = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

function WaitingRow({
  request: r,
  places,
  onAnswered,
}: {
  request: WaitingAgentSignIn;
  places: Place[];
  onAnswered: (message: string) => void;
}) {
  const client = useQueryClient();
  const [place, setPlace] = useState(r.askedPlace?.root ?? '');
  const label = places.find((p) => p.root === place)?.label ?? (place === '' ? 'This machine' : place);
  const refresh = async () => {
    await client.invalidateQueries({ queryKey: ['agent-sign-ins'] });
    await client.invalidateQueries({ queryKey: ['agent-clients'] });
  };
  const allow = useMutation({
    mutationFn: () => approveSignIn(r.code, place),
    onSuccess: async () => {
      await refresh();
      onAnswered(`${r.clientName} may now work on this machine in ${label}.`);
    },
  });
  const deny = useMutation({
    mutationFn: () => denySignIn(r.code),
    onSuccess: async () => {
      await refresh();
      onAnswered(`${r.clientName} was refused.`);
    },
  });
  const minutes = Math.max(0, Math.ceil((Date.parse(r.expiresAt) - Date.now()) / 60_000));
  const choices = places.some((p) => p.root === '') ? places : [{ root: '', label: 'This machine' } as Place, ...places];
  const busy = allow.isPending || deny.isPending;

  return (
    <li className="row-wrap" aria-label={`Sign-in of ${r.clientName}, code ${r.code}`}>
      <div className="row">
        <Initial name={r.clientName} />
        <div className="row-main">
          <div className="row-title">
            <span className="name">
              Allow {r.clientName} to work on this machine in {label}?
            </span>
          </div>
          <div className="row-detail">
            Code <strong className="sign-in-code">{r.code}</strong> · asked at {timeOf(r.createdAt)}
            {r.from && <> from {r.from}</>} · its answer goes to <code>{r.redirectUri}</code> · refused in {minutes} min if unanswered
            {r.askedPath !== undefined && <> · it asked for “{r.askedPath}”, which is no place here</>}
          </div>
          <label className="sign-in-place">
            Place{' '}
            <select value={place} onChange={(e) => setPlace(e.target.value)} disabled={busy}>
              {choices.map((p) => (
                <option key={p.root} value={p.root}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div className="row-actions">
          <button
            type="button"
            className="button primary"
            onClick={() => allow.mutate()}
            disabled={busy}
            aria-label={`Allow ${r.clientName}`}
          >
            {allow.isPending ? 'Allowing…' : 'Allow'}
          </button>
          <button type="button" className="button" onClick={() => deny.mutate()} disabled={busy} aria-label={`Deny ${r.clientName}`}>
            {deny.isPending ? 'Denying…' : 'Deny'}
          </button>
        </div>
      </div>
      {allow.isError && <ErrorNote error={allow.error} title={`${r.clientName} was not allowed.`} />}
      {deny.isError && <ErrorNote error={deny.error} title={`${r.clientName} was not refused.`} />}
    </li>
  );
}
