import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { clientFilesQuery, writeClientEntry } from '../../api/access';
import { ApiError } from '../../api/client';
import type { ClientId, WrittenClientEntry } from '../../api/access';
import type { Place } from '../../api/connections';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';

const CLIENTS: { id: ClientId; name: string }[] = [
  { id: 'claude-desktop', name: 'Claude Desktop' },
  { id: 'cursor', name: 'Cursor' },
  { id: 'vscode', name: 'VS Code' },
  { id: 'claude-code', name: 'Claude Code' },
];

/**
 * Connect a client on this machine: this server's entry written into its configuration (the
 * person's own file, or the place folder's), with a new token bound to the place or for an OAuth
 * sign-in; the rest of the file kept, a backup beside it; then what was written, said.
 */
export function WriteClientForm({
  places,
  authRequired,
  onWritten,
}: {
  places: Place[];
  authRequired: boolean;
  onWritten: (message: string) => void;
}) {
  const client = useQueryClient();
  const [target, setTarget] = useState<ClientId>('claude-code');
  const [root, setRoot] = useState('');
  const [scope, setScope] = useState<'user' | 'project'>('user');
  const [auth, setAuth] = useState<'token' | 'oauth'>(authRequired ? 'token' : 'oauth');
  const [replace, setReplace] = useState(false);
  const files = useQuery(clientFilesQuery(root));
  const fileOf = (s: 'user' | 'project') => files.data?.clients.find((c) => c.client === target)?.files.find((f) => f.scope === s)?.path;
  const placeLabel = places.find((p) => p.root === root)?.label ?? 'This machine';
  const clientName = CLIENTS.find((c) => c.id === target)!.name;
  const write = useMutation({
    mutationFn: () => writeClientEntry({ client: target, workspacePath: root, scope, auth, replace }),
    onSuccess: async ({ written }) => {
      setReplace(false);
      onWritten(`${written.clientName}’s configuration ${written.created ? 'was made' : 'was changed'}: ${written.file}.`);
      await client.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  // The client already has an entry of that name: offer to replace it (the backup keeps the old one).
  const taken = write.error instanceof ApiError && write.error.code === 'entry_exists';
  const reset = () => write.reset();

  return (
    <div className="written">
      <form
        className="inline-form"
        aria-label="Write this server into a client"
        onSubmit={(event) => {
          event.preventDefault();
          write.mutate();
        }}
      >
        <div className="field-row">
          <label className="field">
            <span className="field-label">Client</span>
            <select
              value={target}
              onChange={(e) => {
                setTarget(e.target.value as ClientId);
                reset();
              }}
            >
              {CLIENTS.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">Its agent works in</span>
            <select
              value={root}
              onChange={(e) => {
                setRoot(e.target.value);
                reset();
              }}
            >
              {places.map((p) => (
                <option key={p.root} value={p.root}>
                  {p.label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <fieldset className="fieldset">
          <legend>Which file</legend>
          {(['user', 'project'] as const).map((s) => {
            const path = fileOf(s);
            return (
              <label className="check" key={s}>
                <input type="radio" name="client-file" checked={scope === s} disabled={!path} onChange={() => setScope(s)} />
                <span>
                  {s === 'user' ? 'Yours, for every project' : `The folder of ${placeLabel}`}:{' '}
                  <code>{path ?? (files.isPending ? '…' : 'none')}</code>
                </span>
              </label>
            );
          })}
        </fieldset>
        <fieldset className="fieldset">
          <legend>How it gets in</legend>
          <label className="check">
            <input type="radio" name="client-auth" checked={auth === 'token'} onChange={() => setAuth('token')} />
            <span>A new token of this app for {placeLabel}, written into the file</span>
          </label>
          <label className="check">
            <input type="radio" name="client-auth" checked={auth === 'oauth'} onChange={() => setAuth('oauth')} />
            <span>It signs in on first use, and you approve it here (no token in the file)</span>
          </label>
        </fieldset>
        {taken && (
          <label className="field-check note note-warn">
            <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.target.checked)} />
            <span>Replace the entry {clientName} has of that name. The file as it was is kept beside it.</span>
          </label>
        )}
        <div className="form-actions">
          <button type="submit" className="button primary" disabled={write.isPending || (taken && !replace)}>
            {write.isPending ? 'Writing…' : `Write into ${clientName}’s configuration`}
          </button>
          <span className="hint">Everything else in the file stays as it is; a copy of it is kept beside it first.</span>
        </div>
        {write.isError && (
          <p className="field-error" role="alert">
            {messageOf(write.error)}
          </p>
        )}
      </form>
      {write.data && <Written result={write.data} placeLabel={placeLabel} />}
      {files.isError && <ErrorNote error={files.error} title="Where the clients keep their configuration could not be found." />}
    </div>
  );
}

function Written({ result: { written, token }, placeLabel }: { result: WrittenClientEntry; placeLabel: string }) {
  return (
    <div className="panel" role="status" aria-label="What was written">
      <p>
        {written.created ? 'Made' : 'Changed'} <code>{written.file}</code>: {written.replaced ? 'replaced' : 'added'} the server “
        {written.name}” for {written.clientName}, working in {placeLabel}:
      </p>
      <pre className="snippet">
        <code>{JSON.stringify(written.entry, null, 2)}</code>
      </pre>
      {written.backup && (
        <p className="hint">
          The file as it was is in <code>{written.backup}</code>.
        </p>
      )}
      <p className="hint">
        {token
          ? `<token> stands for a new token, “${token.name}”, written in the file and shown nowhere else; revoke it under Tokens to shut ${written.clientName} out.`
          : `${written.clientName} signs in on first use: approve it under Waiting sign-ins.`}{' '}
        Restart {written.clientName} (or reload its MCP servers) to use it.
      </p>
    </div>
  );
}
