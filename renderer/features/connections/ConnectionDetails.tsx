import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { credentialsMethodWords } from '../../../common/api/client-credentials.js';
import { connectionDetailsQuery, editConnection, putSecret, secretsQuery } from '../../api/connections';
import type { Connection, ConnectionEdit } from '../../api/connections';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';
import { closeOnEscape, focusFirstField } from '../../ui/keyboard';
import { ClientCredentialsFields, credentialsChoiceOf, credentialsEdit } from './ClientCredentialsFields';
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
  onClosed,
  announce,
}: {
  root: string;
  connection: Connection;
  editing: boolean;
  /** The fix form closed: saved (the details stay), or cancelled. */
  onClosed: (saved: boolean) => void;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const details = useQuery(connectionDetailsQuery(root, c));
  const refresh = () =>
    Promise.all([
      client.invalidateQueries({ queryKey: ['place-connections', root] }),
      client.invalidateQueries({ queryKey: ['connection-details', root, c.owner, c.name] }),
    ]);
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
            onClosed(true);
          }}
          onCancel={() => onClosed(false)}
          announce={announce}
        />
      )}
      {details.isPending && <p className="muted small">Loading details…</p>}
      {details.isError && (
        <ErrorNote
          error={details.error}
          title="The details could not be loaded."
          onRetry={() => void details.refetch()}
          retrying={details.isFetching}
        />
      )}
      {d && (
        <>
          <p className="muted small">
            {d.checkedAt ? `Last checked ${new Date(d.checkedAt).toLocaleString()}` : 'Not checked yet'} ·{' '}
            {d.url ?? <code>{d.local?.commandLine}</code>}
            {d.ownApp && ` · signs in with your own OAuth app ${d.ownApp.clientId}`}
            {d.clientCredentials &&
              ` · logs in with the client credentials ${d.clientCredentials.clientId}, ${credentialsMethodWords[d.clientCredentials.method]}`}
          </p>
          {d.local && <LocalDetails local={d.local} />}
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

/** A local server: where its variables come from, what else it may reach, its process and its last stderr lines. */
function LocalDetails({ local }: { local: NonNullable<Connection['local']> }) {
  const p = local.process;
  return (
    <>
      {local.env.length > 0 && (
        <p className="muted small">Variables: {local.env.map((e) => `${e.name} from the secret ${e.secret}`).join(', ')}</p>
      )}
      {local.hosts.length > 0 && (
        <p className="muted small">Under the place and strict policies it may also reach {local.hosts.join(', ')}.</p>
      )}
      <p className="muted small">
        {!p
          ? 'Not started yet: it starts on first use.'
          : p.state === 'running'
            ? `Running (process ${p.pid}) since ${new Date(p.since!).toLocaleTimeString()}.`
            : p.state === 'starting'
              ? 'Starting…'
              : p.state === 'stopping'
                ? `Stopping (process ${p.pid})${p.stopped ? `: ${p.stopped}` : ''}…`
                : `Stopped${p.stopped ? `: ${p.stopped}` : ''}.`}
      </p>
      {p && p.stderr.length > 0 && (
        <>
          <h3>Last output</h3>
          <pre className="stderr-tail" aria-label="Its last lines on stderr">
            {p.stderr.join('\n')}
          </pre>
          <p className="muted small">All of it: {p.logFile}</p>
        </>
      )}
    </>
  );
}

/** Fix in place: the name, the server URL, and the secret it sends (API key) or the own OAuth app it signs in with. */
function EditForm({
  root,
  connection: c,
  onDone,
  onCancel,
  announce,
}: {
  root: string;
  connection: Connection;
  onDone: () => Promise<unknown>;
  onCancel: () => void;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const [name, setName] = useState(c.displayName);
  const [url, setUrl] = useState(c.url ?? '');
  const [secret, setSecret] = useState<SecretChoice>(() => ({ ...emptySecretChoice(), pick: c.secretName ?? '' }));
  const [clientId, setClientId] = useState(c.ownApp?.clientId ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [machine, setMachine] = useState(() => credentialsChoiceOf(c.clientCredentials));
  const save = useMutation({
    mutationFn: async () => {
      const edit: ConnectionEdit = {};
      if (name.trim() !== c.displayName) edit.name = name.trim();
      if (c.url !== undefined && url.trim() !== c.url) edit.url = url.trim();
      if (c.auth === 'header' && c.header) {
        const secretName = await resolveSecret(
          secret,
          (n, v, replace) => putSecret(root, n, v, replace),
          client.getQueryData(secretsQuery(root).queryKey)?.names,
        );
        // A new secret (also one replacing the value of the same name) is sent, so the server is asked again.
        if (secret.pick === NEW_SECRET || secretName !== c.secretName)
          edit.header = { name: c.header, ...(c.prefix && { prefix: c.prefix }), secret: secretName };
      }
      // Another own OAuth app (a new client ID, or a new secret for it), or none: the next sign-in uses it.
      const id = clientId.trim();
      if (c.auth === 'oauth' && !machine.on && (id !== (c.ownApp?.clientId ?? '') || clientSecret))
        edit.own_app = id ? { client_id: id, ...(clientSecret && { client_secret: clientSecret }) } : null;
      // A machine login replaces the browser's; the server logs in with it before keeping it.
      const credentials = c.auth === 'oauth' ? credentialsEdit(machine, c.clientCredentials) : undefined;
      if (credentials !== undefined) edit.client_credentials = credentials;
      return (await editConnection(root, c, edit)).connection;
    },
    onSuccess: async (edited) => {
      announce(
        edited.state === 'connected'
          ? `${edited.displayName} is fixed: connected, ${edited.tools ?? 0} tools.`
          : edited.auth === 'oauth' && edited.state === 'sign-in'
            ? `${edited.displayName} was changed. Sign in to it again to use it.`
            : `${edited.displayName} was changed, but it does not work yet: ${edited.reason ?? edited.state}`,
      );
      await Promise.all([onDone(), client.invalidateQueries({ queryKey: ['secrets', root] })]);
    },
  });
  return (
    <form
      className="inline-form"
      aria-label={`Fix ${c.displayName}`}
      ref={focusFirstField}
      onKeyDown={closeOnEscape(onCancel)}
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
        {c.url !== undefined && (
          <label className="field">
            <span className="field-label">Server URL</span>
            <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required autoComplete="off" spellCheck={false} />
          </label>
        )}
      </div>
      {c.auth === 'header' && <SecretPicker root={root} value={secret} onChange={setSecret} />}
      {c.auth === 'oauth' && <ClientCredentialsFields value={machine} onChange={setMachine} kept={c.clientCredentials} />}
      {c.auth === 'oauth' && !machine.on && (
        <fieldset className="fieldset">
          <legend>Your own OAuth app (optional)</legend>
          <p className="muted small">
            For providers that let no app register itself. Changing it signs you out; then sign in again with it.
          </p>
          <div className="field-row">
            <label className="field">
              <span className="field-label">Client ID</span>
              <input
                value={clientId}
                onChange={(e) => setClientId(e.target.value)}
                maxLength={500}
                autoComplete="off"
                spellCheck={false}
                placeholder="Empty: the app registers itself"
              />
            </label>
            <label className="field">
              <span className="field-label">
                Client secret <span className="muted">(optional)</span>
              </span>
              <input
                type="password"
                value={clientSecret}
                onChange={(e) => setClientSecret(e.target.value)}
                maxLength={2000}
                autoComplete="off"
                disabled={!clientId.trim()}
              />
            </label>
          </div>
        </fieldset>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? 'Saving and testing…' : 'Save and test'}
        </button>
        <button type="button" className="button" onClick={onCancel}>
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
