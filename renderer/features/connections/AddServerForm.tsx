import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { addServer, putSecret, secretsQuery } from '../../api/connections';
import type { Connection } from '../../api/connections';
import { messageOf } from '../../ui/ErrorNote';
import { emptySecretChoice, resolveSecret, SecretPicker, type SecretChoice } from './SecretPicker';
import { AddedButNotConnected, connectAdded, useClearWhenFixed, type ConnectFlow } from './useConnectFlow';

/** A remote MCP server by URL, with an optional API-key header taken from a place secret. */
export function AddServerForm({
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
  const client = useQueryClient();
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [useKey, setUseKey] = useState(false);
  const [header, setHeader] = useState('Authorization');
  const [prefix, setPrefix] = useState('Bearer ');
  const [secret, setSecret] = useState<SecretChoice>(emptySecretChoice);
  useQuery({ ...secretsQuery(root), enabled: useKey });

  const add = useMutation({
    mutationFn: async () => {
      const secretName = useKey
        ? await resolveSecret(
            secret,
            (n, v, replace) => putSecret(root, n, v, replace),
            client.getQueryData(secretsQuery(root).queryKey)?.names,
          )
        : undefined;
      if (secretName) await client.invalidateQueries({ queryKey: ['secrets', root] });
      const { connection } = await addServer(root, {
        url: url.trim(),
        ...(name.trim() && { name: name.trim() }),
        ...(secretName && { header: { name: header.trim(), ...(prefix && { prefix }), secret: secretName } }),
      });
      await connectAdded(flow, connection, connection.auth === 'oauth');
      if (connection.state === 'connected') announce(`${connection.displayName} is connected: ${connection.tools ?? 0} tools.`);
    },
    onSuccess: () => reset(),
    onError: (error) => {
      if (error instanceof AddedButNotConnected) reset();
    },
    onSettled: () => client.invalidateQueries({ queryKey: ['place-connections', root] }),
  });
  useClearWhenFixed(root, add, connections);
  // A change to what the error was about makes it stale: it goes, and the next try says its own.
  const changed =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      if (add.isError) add.reset();
    };
  function reset() {
    setUrl('');
    setName('');
    setUseKey(false);
    setSecret(emptySecretChoice());
  }

  return (
    <form
      className="inline-form"
      aria-label="Add a server that is not listed"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate();
      }}
    >
      <label className="field">
        <span className="field-label">Server URL</span>
        <input
          type="url"
          value={url}
          onChange={(e) => changed(setUrl)(e.target.value)}
          required
          placeholder="https://mcp.example.com/mcp"
          autoComplete="off"
          spellCheck={false}
        />
      </label>
      <label className="field">
        <span className="field-label">
          Name <span className="muted">(optional)</span>
        </span>
        <input
          value={name}
          onChange={(e) => changed(setName)(e.target.value)}
          maxLength={100}
          autoComplete="off"
          placeholder="Shown in the list"
        />
      </label>
      <label className="check">
        <input type="checkbox" checked={useKey} onChange={(e) => changed(setUseKey)(e.target.checked)} />
        <span>It needs an API key</span>
      </label>
      {useKey && (
        <>
          <div className="field-row">
            <label className="field">
              <span className="field-label">Header</span>
              <input
                value={header}
                onChange={(e) => changed(setHeader)(e.target.value)}
                required
                pattern="[A-Za-z0-9\-]{1,100}"
                title="Letters, digits and -"
                autoComplete="off"
                spellCheck={false}
              />
            </label>
            <label className="field">
              <span className="field-label">
                Before the key <span className="muted">(optional)</span>
              </span>
              <input
                value={prefix}
                onChange={(e) => changed(setPrefix)(e.target.value)}
                maxLength={50}
                autoComplete="off"
                spellCheck={false}
              />
            </label>
          </div>
          <SecretPicker root={root} value={secret} onChange={changed(setSecret)} />
        </>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add and connect'}
        </button>
      </div>
      {add.isError && (
        <p className="field-error" role="alert">
          {messageOf(add.error)}
        </p>
      )}
    </form>
  );
}
