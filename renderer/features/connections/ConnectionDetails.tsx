import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { connectionDetailsQuery, editConnection, putSecret, secretsQuery } from '../../api/connections';
import type { Connection } from '../../api/types';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';
import { emptySecretChoice, NEW_SECRET, resolveSecret, SecretPicker, type SecretChoice } from './SecretPicker';

/**
 * One connection's details, under its row: its tools with an on/off switch each (off: hidden from
 * agents and refused), the last check, the server's last errors, and the form that fixes it in
 * place (name, URL, API-key secret).
 */
export function ConnectionDetails({
  root,
  connection: c,
  editing,
  onSaved,
  announce,
}: {
  root: string;
  connection: Connection;
  editing: boolean;
  /** The fix was saved: the form closes, the details stay. */
  onSaved: () => void;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const details = useQuery(connectionDetailsQuery(root, c));
  const refresh = () =>
    Promise.all([client.invalidateQueries({ queryKey: ['place-connections', root] }), client.invalidateQueries({ queryKey: ['connection-details', root, c.owner, c.name] })]);
  const toggle = useMutation({
    mutationFn: ({ tool, on }: { tool: string; on: boolean }) => editConnection(root, c, { tools: { [tool]: on } }),
    onSuccess: async (_answer, { tool, on }) => {
      announce(`${tool} is ${on ? 'on' : 'off'} for the agents of this place.`);
      await refresh();
    },
  });
  const d = details.data?.connection;
  return (
    <div className="details" aria-label={`Details of ${c.displayName}`} role="region">
      {editing && c.mine && (
        <EditForm
          root={root}
          connection={c}
          onDone={async () => {
            await refresh();
            onSaved();
          }}
          announce={announce}
        />
      )}
      {details.isPending && <p className="muted small">Loading details…</p>}
      {details.isError && <ErrorNote error={details.error} title="The details could not be loaded." onRetry={() => void details.refetch()} retrying={details.isFetching} />}
      {d && (
        <>
          <p className="muted small">{d.checkedAt ? `Last checked ${new Date(d.checkedAt).toLocaleString()}` : 'Not checked yet'} · {d.url}</p>
          <h3>Tools</h3>
          {d.toolList.length ? (
            <ul className="tool-list">
              {d.toolList.map((t) => (
                <li key={t.name}>
                  <label className="field-check">
                    <input
                      type="checkbox"
                      role="switch"
                      // Shown as switched while the change is being saved.
                      checked={toggle.isPending && toggle.variables.tool === t.name ? toggle.variables.on : t.enabled}
                      disabled={!c.canRemove || toggle.isPending}
                      onChange={(e) => toggle.mutate({ tool: t.name, on: e.target.checked })}
                      aria-label={`${t.name} on`}
                    />
                    <span className="tool-name">{t.name}</span>
                  </label>
                  {t.description && <span className="muted small">{t.description}</span>}
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted small">No tools known: the server did not answer its last check.</p>
          )}
          {toggle.isError && <ErrorNote error={toggle.error} title="The tool was not switched." />}
          <h3>Last errors</h3>
          {d.errors.length ? (
            <ul className="error-log">
              {d.errors.map((e) => (
                <li key={`${e.at}${e.message}`}>
                  {new Date(e.at).toLocaleTimeString()} — {e.message}
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted small">None.</p>
          )}
        </>
      )}
    </div>
  );
}

/** Fix in place: the name, the server URL, and (for an API-key connection) the secret it sends. */
function EditForm({ root, connection: c, onDone, announce }: { root: string; connection: Connection; onDone: () => Promise<unknown>; announce: (m: string) => void }) {
  const client = useQueryClient();
  const [name, setName] = useState(c.displayName);
  const [url, setUrl] = useState(c.url);
  const [secret, setSecret] = useState<SecretChoice>(() => ({ ...emptySecretChoice(), pick: c.secretName ?? '' }));
  const save = useMutation({
    mutationFn: async () => {
      const edit: { name?: string; url?: string; header?: { name: string; prefix?: string; secret: string } } = {};
      if (name.trim() !== c.displayName) edit.name = name.trim();
      if (url.trim() !== c.url) edit.url = url.trim();
      if (c.auth === 'header' && c.header) {
        const secretName = await resolveSecret(secret, (n, v) => putSecret(root, n, v), client.getQueryData(secretsQuery(root).queryKey)?.names);
        // A new secret (also one replacing the value of the same name) is sent, so the server is asked again.
        if (secret.pick === NEW_SECRET || secretName !== c.secretName) edit.header = { name: c.header, ...(c.prefix && { prefix: c.prefix }), secret: secretName };
      }
      return (await editConnection(root, c, edit)).connection;
    },
    onSuccess: async (edited) => {
      announce(edited.state === 'connected' ? `${edited.displayName} is fixed: connected, ${edited.tools ?? 0} tools.` : `${edited.displayName} was changed, but it does not work yet: ${edited.reason ?? edited.state}`);
      await Promise.all([onDone(), client.invalidateQueries({ queryKey: ['secrets', root] })]);
    },
  });
  return (
    <form
      className="inline-form"
      aria-label={`Fix ${c.displayName}`}
      onSubmit={(event) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <div className="field-row">
        <label className="field">
          <span className="field-label">Name</span>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} autoComplete="off" />
        </label>
        <label className="field">
          <span className="field-label">Server URL</span>
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required autoComplete="off" spellCheck={false} />
        </label>
      </div>
      {c.auth === 'header' && <SecretPicker root={root} value={secret} onChange={setSecret} />}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? 'Saving and testing…' : 'Save and test'}
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
