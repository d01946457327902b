import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { splitCommandLine } from '../../../common/command-line';
import { addLocalServer, secretsQuery } from '../../api/connections';
import type { PlacePolicy } from '../../api/connections';
import { messageOf } from '../../ui/ErrorNote';
import { SecretPicker } from './SecretPicker';
import { newVariable, resolveVariables, useInstallHosts, type VariableChoice } from './LocalServerFields';
import { AddedButNotConnected, connectAdded, type ConnectFlow } from './useConnectFlow';

/**
 * A local MCP server: a command run on this machine over stdio (npx, uvx, an executable), its
 * variables each from a secret of the place, and the hosts it needs beyond the place's list. The
 * hosts start as those its launcher installs from here, so that under strict it can be installed.
 */
export function AddLocalServerForm({
  root,
  policy,
  flow,
  announce,
}: {
  root: string;
  policy: PlacePolicy['kind'] | undefined;
  flow: ConnectFlow;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const [line, setLine] = useState('');
  const [name, setName] = useState('');
  const [variables, setVariables] = useState<VariableChoice[]>([]);
  const nextKey = useRef(0);
  const [hosts, setHosts] = useState('');
  const [hostsEdited, setHostsEdited] = useState(false);

  let words: string[] = [];
  let lineError: string | undefined;
  try {
    words = splitCommandLine(line);
  } catch (error) {
    lineError = messageOf(error);
  }
  const command = words[0] ?? '';
  const install = useInstallHosts(command);
  // Filled in from the launcher's registry until the person writes the list themselves.
  const installText = install.join(', ');
  useEffect(() => {
    if (!hostsEdited) setHosts(installText);
  }, [installText, hostsEdited]);
  const hostList = hosts.split(/[\s,]+/).filter(Boolean);
  const missing = install.filter((h) => !hostList.includes(h));

  const add = useMutation({
    mutationFn: async () => {
      if (lineError) throw new Error(lineError);
      if (!command) throw new Error('Give the command that starts the server, for example npx -y @playwright/mcp.');
      const env = await resolveVariables(root, variables, client.getQueryData(secretsQuery(root).queryKey)?.names);
      if (variables.length) await client.invalidateQueries({ queryKey: ['secrets', root] });
      const { connection } = await addLocalServer(root, {
        command,
        args: words.slice(1),
        env,
        hosts: hostList,
        ...(name.trim() && { name: name.trim() }),
      });
      await connectAdded(flow, connection, false);
      announce(`${connection.displayName} runs on this machine and is connected: ${connection.tools ?? 0} tools.`);
    },
    onSuccess: () => reset(),
    onError: (error) => {
      if (error instanceof AddedButNotConnected) reset();
    },
    onSettled: () => client.invalidateQueries({ queryKey: ['place-connections', root] }),
  });
  function reset() {
    setLine('');
    setName('');
    setVariables([]);
    setHostsEdited(false);
  }

  return (
    <form
      className="inline-form"
      aria-label="Add a local server"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate();
      }}
    >
      <label className="field">
        <span className="field-label">Command</span>
        <input
          value={line}
          onChange={(e) => setLine(e.target.value)}
          required
          placeholder="npx -y @playwright/mcp"
          autoComplete="off"
          spellCheck={false}
          aria-invalid={lineError ? true : undefined}
          aria-describedby="local-command-hint"
        />
        <span className="hint" id="local-command-hint">
          {lineError ??
            'A program and its arguments, as in a terminal; quotes keep a word with spaces. It is run as it is, not through a shell.'}
        </span>
      </label>
      <label className="field">
        <span className="field-label">
          Name <span className="muted">(optional)</span>
        </span>
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} autoComplete="off" placeholder="Shown in the list" />
      </label>
      {variables.map((v) => (
        <div className="fieldset" key={v.key} role="group" aria-label={`Variable ${v.name || v.key + 1}`}>
          <div className="field-row">
            <label className="field">
              <span className="field-label">Variable</span>
              <input
                value={v.name}
                onChange={(e) => setVariables((list) => list.map((x) => (x.key === v.key ? { ...x, name: e.target.value } : x)))}
                required
                pattern="[A-Za-z_][A-Za-z0-9_]{0,127}"
                title="Letters, digits and _, not starting with a digit"
                placeholder="e.g. API_TOKEN"
                autoComplete="off"
                spellCheck={false}
              />
            </label>
            <div className="form-actions">
              <button type="button" className="button quiet" onClick={() => setVariables((list) => list.filter((x) => x.key !== v.key))}>
                Remove {v.name || 'this variable'}
              </button>
            </div>
          </div>
          <SecretPicker
            root={root}
            value={v.secret}
            legend="Its value, from a secret of this place"
            valueLabel="Value"
            onChange={(secret) => setVariables((list) => list.map((x) => (x.key === v.key ? { ...x, secret } : x)))}
          />
        </div>
      ))}
      <div className="form-actions">
        <button type="button" className="button" onClick={() => setVariables((list) => [...list, newVariable(nextKey.current++)])}>
          Add a variable
        </button>
        <span className="hint">Its value is kept in this machine’s keychain, never in a file.</span>
      </div>
      <label className="field">
        <span className="field-label">
          Hosts it needs <span className="muted">(optional)</span>
        </span>
        <input
          value={hosts}
          onChange={(e) => {
            setHosts(e.target.value);
            setHostsEdited(true);
          }}
          autoComplete="off"
          spellCheck={false}
          placeholder="api.example.com"
          aria-describedby="local-hosts-hint"
        />
        <span className="hint" id="local-hosts-hint">
          Under the place and strict policies it runs in this place’s sandbox and may reach these hosts too, besides the place’s own list.
          {install.length > 0 && ` ${command} installs packages from ${install.join(', ')} on this machine.`}
        </span>
      </label>
      {policy === 'strict' && missing.length > 0 && (
        <p className="note note-warn" role="note">
          This place is strict: without {missing.join(', ')} in the hosts, {command} cannot install the server.
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={add.isPending}>
          {add.isPending ? 'Starting…' : 'Add and start'}
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
