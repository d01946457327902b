import { useMutation, useQueryClient } from '@tanstack/react-query';
import { lazy, useEffect, useRef, useState } from 'react';
import { cancelCheck, putSecret, removeConnection, testConnection } from '../../api/connections';
import type { Connection } from '../../api/connections';
import { closeOnEscape, focusNeighbour, neighbourOf } from '../../ui/keyboard';
import { ConfirmInline } from '../../ui/ConfirmInline';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';
import { Initial } from '../../ui/Initial';
import { LoadedPart } from '../../ui/LoadedPart';
import { useBrowserValue } from '../../ui/useBrowserValue';
import type { ConnectFlow } from './useConnectFlow';

// Opened by a click, so they come in chunks of their own: the first screen's script is the smaller.
const ConnectionDetails = lazy(() => import('./ConnectionDetails').then((module) => ({ default: module.ConnectionDetails })));
const OwnAppPanel = lazy(() => import('./OwnAppPanel').then((module) => ({ default: module.OwnAppPanel })));

export const STATE_WORDS: Record<Connection['state'], string> = {
  connected: 'Connected',
  checking: 'Checking…',
  cancelled: 'Check cancelled',
  'sign-in': 'Sign in',
  'key-refused': 'Key refused',
  unreachable: 'Unreachable',
  'not-mcp': 'Not an MCP server',
  'too-large': 'Tool list too large',
  paused: 'Paused',
  'needs-secret': 'Needs secret',
};

/** States in which the server was asked and did not answer as it must (or not in time: its check was cancelled). */
const FAILED = new Set<Connection['state']>(['key-refused', 'unreachable', 'not-mcp', 'too-large', 'cancelled']);

const timeOf = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function ConnectedList({
  root,
  connections,
  flow,
  announce,
}: {
  root: string;
  connections: Connection[];
  flow: ConnectFlow;
  announce: (m: string) => void;
}) {
  if (!connections.length) {
    return <p className="empty">No connections yet. Add one from Available below; it will use your login.</p>;
  }
  return (
    <ul className="rows" aria-labelledby="connected-heading">
      {connections.map((c) => (
        <ConnectedRow key={`${c.owner}\n${c.name}`} root={root} connection={c} flow={flow} announce={announce} />
      ))}
    </ul>
  );
}

function ConnectedRow({
  root,
  connection: c,
  flow,
  announce,
}: {
  root: string;
  connection: Connection;
  flow: ConnectFlow;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [settingSecret, setSettingSecret] = useState(false);
  // The details under the row; `editing` also opens the form that fixes it in place.
  const [open, setOpen] = useState<'closed' | 'details' | 'editing'>('closed');
  const removeRef = useRef<HTMLButtonElement>(null);
  const rowRef = useRef<HTMLLIElement>(null);
  const actionsRef = useRef<HTMLDivElement>(null);
  // The button that opened the fix form (Fix or Edit), and where the form closes to: focus goes back there.
  const opener = useRef<{ action: 'fix' | 'edit'; closesTo: 'closed' | 'details' } | null>(null);
  const [refocus, setRefocus] = useState<'fix' | 'edit' | 'details' | 'test' | null>(null);
  useEffect(() => {
    if (!refocus) return;
    setRefocus(null);
    // The opener, or, when a fix made it go away (it works now), the details toggle next to it.
    const actions = actionsRef.current;
    (
      actions?.querySelector<HTMLElement>(`[data-action="${refocus}"]`) ?? actions?.querySelector<HTMLElement>('[data-action="details"]')
    )?.focus();
  }, [refocus]);
  const startEditing = (action: 'fix' | 'edit') => {
    opener.current = { action, closesTo: open === 'closed' ? 'closed' : 'details' };
    setOpen('editing');
  };
  const stopEditing = (saved: boolean) => {
    const from = opener.current;
    opener.current = null;
    setOpen(saved ? 'details' : (from?.closesTo ?? 'details'));
    // Saved, the details stay open and its toggle stays put (Fix may go once the check says it works).
    setRefocus(saved ? 'details' : (from?.action ?? 'edit'));
  };
  const mine = c.mine;
  const pending = flow.pending.find((p) => p.name === c.name);
  const ownApp = flow.ownApp?.name === c.name ? flow.ownApp : null;

  const remove = useMutation({
    mutationFn: () => removeConnection(root, c),
    // The row that takes this one's place (the next, else the one before) keeps the keyboard's place. Found
    // now, while this row is there: the server's change event may refresh the list (and unmount it) before the answer.
    onMutate: () => neighbourOf(rowRef.current),
    onSuccess: async (_removed, _vars, neighbour) => {
      announce(`${c.displayName} was removed.`);
      flow.dismiss(c.name);
      await client.invalidateQueries({ queryKey: ['place-connections', root] });
      focusNeighbour(neighbour, 'connected-heading');
    },
  });
  // A machine login (client credentials) logs in at once, with no sign-in page to open.
  const machine = c.clientCredentials !== undefined;
  const signIn = useMutation({ mutationFn: () => flow.connect({ name: c.name, displayName: c.displayName, expectSignIn: !machine }) });
  const test = useMutation({
    mutationFn: () => testConnection(root, c),
    onSuccess: async ({ connection }) => {
      announce(
        connection.state === 'connected'
          ? `${c.displayName} works: ${connection.tools ?? 0} tools.`
          : `${c.displayName}: ${STATE_WORDS[connection.state]}.`,
      );
      await client.invalidateQueries({ queryKey: ['place-connections', root] });
    },
  });
  // Cancel ends the check on the server; Retry takes its place, and the keyboard goes there.
  const cancel = useMutation({
    mutationFn: () => cancelCheck(root, c),
    onSuccess: async ({ connection }) => {
      announce(`${c.displayName}: ${STATE_WORDS[connection.state]}.`);
      await client.invalidateQueries({ queryKey: ['place-connections', root] });
      setRefocus('test');
    },
  });
  const failed = FAILED.has(c.state);
  // The last sign-in was denied or failed (the server heard it from the browser): say so, with Retry.
  const signInFailed = !pending && c.state === 'sign-in' && c.signIn?.state === 'failed' ? c.signIn : undefined;

  const stateText = pending ? 'Signing in…' : signInFailed ? 'Sign-in failed' : STATE_WORDS[c.state];
  // In the browser's time zone and words, which the host does not know: added once the page is live.
  const checkedAt = useBrowserValue(() => c.checkedAt && timeOf(c.checkedAt), undefined);
  const detail = [
    `Uses ${mine ? 'your' : `${c.ownerName}’s`} login`,
    c.secretName ? `key from secret ${c.secretName}` : undefined,
    c.clientCredentials ? `client credentials ${c.clientCredentials.clientId}` : undefined,
    c.state === 'connected' && c.tools !== undefined ? `${c.tools} tool${c.tools === 1 ? '' : 's'}` : undefined,
    checkedAt && c.state !== 'checking' ? `checked ${checkedAt}` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');

  return (
    <li className="row-wrap" ref={rowRef} tabIndex={-1} aria-label={c.displayName}>
      <div className="row">
        <Initial name={c.displayName} />
        <div className="row-main">
          <div className="row-title">
            <span className="name">{c.displayName}</span>
            <span className={`state state-${pending ? 'pending' : signInFailed ? 'sign-in-failed' : c.state}`}>{stateText}</span>
          </div>
          <div className="row-detail">
            {detail}
            {c.state === 'checking' && c.checkingSince && <Elapsed since={c.checkingSince} />}
            {c.reason && c.state !== 'connected' && !pending && !signInFailed && (
              <span className="reason"> — {c.reason.replace(/^Paused:\s*/, '')}</span>
            )}
            {signInFailed && <span className="reason"> — {signInFailed.reason}</span>}
          </div>
        </div>
        <div className="row-actions" ref={actionsRef}>
          {confirming ? (
            <ConfirmInline
              label={`Remove ${c.displayName}?`}
              question={<>Remove? {mine ? 'Your' : `${c.ownerName}’s`} login is deleted.</>}
              yes="Yes, remove"
              working="Removing…"
              pending={remove.isPending}
              onYes={() => remove.mutate()}
              onNo={() => {
                setConfirming(false);
                remove.reset();
                requestAnimationFrame(() => removeRef.current?.focus());
              }}
            />
          ) : (
            <>
              {c.state === 'checking' && c.checkingSince && (
                <button
                  type="button"
                  className="button"
                  onClick={() => cancel.mutate()}
                  disabled={cancel.isPending}
                  aria-label={`Cancel the check of ${c.displayName}`}
                >
                  {cancel.isPending ? 'Cancelling…' : 'Cancel'}
                </button>
              )}
              {(c.state === 'connected' || failed) && (
                <button
                  type="button"
                  className="button"
                  data-action="test"
                  onClick={() => test.mutate()}
                  disabled={test.isPending}
                  aria-label={`${failed ? 'Retry' : 'Test'} ${c.displayName}`}
                >
                  {test.isPending ? 'Testing…' : failed ? 'Retry' : 'Test'}
                </button>
              )}
              {mine && c.state === 'sign-in' && !pending && !ownApp && (
                <button
                  type="button"
                  className="button primary"
                  onClick={() => signIn.mutate()}
                  disabled={signIn.isPending}
                  aria-label={
                    machine
                      ? `Log in to ${c.displayName} with its client credentials`
                      : `${signInFailed ? 'Retry the sign-in to' : 'Sign in to'} ${c.displayName}`
                  }
                >
                  {machine
                    ? signIn.isPending
                      ? 'Logging in…'
                      : 'Log in'
                    : signIn.isPending
                      ? 'Opening…'
                      : signInFailed
                        ? 'Retry'
                        : 'Sign in'}
                </button>
              )}
              {c.state === 'needs-secret' && c.secretName && c.canRemove && !settingSecret && (
                <button
                  type="button"
                  className="button"
                  onClick={() => setSettingSecret(true)}
                  aria-label={`Set the secret ${c.secretName} for ${c.displayName}`}
                >
                  Set secret
                </button>
              )}
              {failed && mine && open !== 'editing' && (
                <button
                  type="button"
                  className="button primary"
                  data-action="fix"
                  onClick={() => startEditing('fix')}
                  aria-label={`Fix ${c.displayName}`}
                >
                  Fix
                </button>
              )}
              <button
                type="button"
                className="button quiet"
                data-action="details"
                aria-expanded={open !== 'closed'}
                onClick={() => setOpen(open === 'closed' ? 'details' : 'closed')}
                aria-label={`${open === 'closed' ? 'Show' : 'Hide'} the details of ${c.displayName}`}
              >
                {open === 'closed' ? 'Details' : 'Hide'}
              </button>
              {mine && open === 'details' && (
                <button
                  type="button"
                  className="button quiet"
                  data-action="edit"
                  onClick={() => startEditing('edit')}
                  aria-label={`Edit ${c.displayName}`}
                >
                  Edit
                </button>
              )}
              {c.canRemove && (
                <button
                  type="button"
                  className="button"
                  ref={removeRef}
                  onClick={() => setConfirming(true)}
                  aria-label={`Remove ${c.displayName}`}
                >
                  Remove
                </button>
              )}
            </>
          )}
        </div>
      </div>
      {pending && (
        <div className="note note-info" role="status">
          <span>
            Finish signing in to {c.displayName} in your browser; this list updates when you are done.{' '}
            <a href={pending.url} target="_blank" rel="noopener noreferrer">
              {pending.opened ? 'Open the sign-in page again' : 'Open the sign-in page'}
            </a>
          </span>
          <button type="button" className="button quiet" onClick={() => flow.dismiss(c.name)}>
            Stop waiting
          </button>
        </div>
      )}
      {test.isError && <ErrorNote error={test.error} title={`${c.displayName} could not be tested.`} />}
      {cancel.isError && <ErrorNote error={cancel.error} title={`The check of ${c.displayName} was not cancelled.`} />}
      {signIn.isError && (
        <ErrorNote
          error={signIn.error}
          title={machine ? `Could not log in to ${c.displayName}.` : `Could not start the sign-in to ${c.displayName}.`}
        />
      )}
      {remove.isError && <ErrorNote error={remove.error} title={`${c.displayName} was not removed.`} />}
      <LoadedPart>
        {ownApp && <OwnAppPanel request={ownApp} flow={flow} />}
        {open !== 'closed' && (
          <ConnectionDetails root={root} connection={c} editing={open === 'editing'} onClosed={stopEditing} announce={announce} />
        )}
      </LoadedPart>
      {settingSecret && c.secretName && (
        <SetSecret root={root} secretName={c.secretName} onDone={() => setSettingSecret(false)} announce={announce} />
      )}
    </li>
  );
}

/**
 * How long the check running now has taken, counted on the page each second (a clock, not a poll);
 * from the browser's clock, so not in the host's HTML.
 */
function Elapsed({ since }: { since: string }) {
  const [now, setNow] = useState<number>();
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now === undefined ? null : <> · for {Math.max(0, Math.round((now - Date.parse(since)) / 1000))} s</>;
}

function SetSecret({
  root,
  secretName,
  onDone,
  announce,
}: {
  root: string;
  secretName: string;
  onDone: () => void;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const [value, setValue] = useState('');
  const save = useMutation({
    mutationFn: () => putSecret(root, secretName, value),
    onSuccess: async () => {
      announce(`The secret ${secretName} is saved.`);
      await Promise.all([
        client.invalidateQueries({ queryKey: ['place-connections', root] }),
        client.invalidateQueries({ queryKey: ['secrets', root] }),
      ]);
      onDone();
    },
  });
  return (
    <form
      className="inline-form"
      onKeyDown={closeOnEscape(onDone)}
      onSubmit={(event) => {
        event.preventDefault();
        if (value) save.mutate();
      }}
    >
      <label className="field">
        <span className="field-label">Value of {secretName} (the API key)</span>
        <input type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} required autoFocus />
      </label>
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={save.isPending || !value}>
          {save.isPending ? 'Saving…' : 'Save secret'}
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      {save.isError && (
        <p className="field-error" role="alert">
          {messageOf(save.error)}
        </p>
      )}
    </form>
  );
}
