import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useDeferredValue, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { searchCatalog } from '../../../common/catalog-search';
import { addFromCatalog, catalogQuery, putSecret, refreshCatalog, secretsQuery } from '../../api/connections';
import type { CatalogEntry, Connection, PlacePolicy, SignInGroup } from '../../api/connections';
import { ErrorNote, messageOf } from '../../ui/ErrorNote';
import { Initial } from '../../ui/Initial';
import { closeOnEscape, focusFirstField } from '../../ui/keyboard';
import { useNarrowScreen } from '../../ui/useNarrowScreen';
import { AddLocalServerForm } from './AddLocalServerForm';
import { AddServerForm } from './AddServerForm';
import { ImportPanel } from './ImportPanel';
import { DeclaredVariables, newVariable, resolveVariables, useInstallHosts, type VariableChoice } from './LocalServerFields';
import { emptySecretChoice, resolveSecret, SecretPicker, type SecretChoice } from './SecretPicker';
import { STATE_WORDS } from './ConnectedList';
import { AddedButNotConnected, connectAdded, useClearWhenFixed, type ConnectFlow } from './useConnectFlow';

/** Rows shown before "Show all": a long registry list stays quick to search and to scan. */
const FIRST_ROWS = 25;
/** Cards (groups and rows) shown before "Show all" on a narrow screen, where each takes much of the screen: search comes first there. */
const NARROW_CARDS = 4;

const AUTH_WORDS: Record<CatalogEntry['auth'], string> = { oauth: 'Sign-in', 'api-key': 'API key', none: 'No key' };

export function AvailableList({
  root,
  policy,
  connections,
  flow,
  announce,
}: {
  root: string;
  policy: PlacePolicy['kind'] | undefined;
  connections: Connection[];
  flow: ConnectFlow;
  announce: (m: string) => void;
}) {
  const client = useQueryClient();
  const [unlisted, setUnlisted] = useState<'remote' | 'local'>('remote');
  const [typed, setTyped] = useState('');
  // Typed into the host's HTML before the page was live, which React did not hear: taken as typed now.
  const searchRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const early = searchRef.current?.value;
    if (early) setTyped(early);
  }, []);
  // The box answers every keystroke at once; the list follows as soon as it can.
  const search = useDeferredValue(typed.trim());
  const [showAll, setShowAll] = useState(false);
  useEffect(() => setShowAll(false), [search]);
  const narrow = useNarrowScreen();
  // After "Show all", the keyboard goes on to the first card it brought (the button it pressed is gone).
  const resultsRef = useRef<HTMLDivElement>(null);
  const [revealFrom, setRevealFrom] = useState<number | null>(null);
  useEffect(() => {
    if (revealFrom === null) return;
    setRevealFrom(null);
    resultsRef.current?.querySelectorAll<HTMLElement>('[data-card]')[revealFrom]?.querySelector<HTMLElement>('button, [tabindex]')?.focus();
  }, [revealFrom]);
  const catalog = useQuery(catalogQuery);
  const retry = useMutation({
    mutationFn: refreshCatalog,
    onSettled: () => client.invalidateQueries({ queryKey: ['catalog'] }),
  });

  const mine = new Map(connections.filter((c) => c.mine).map((c) => [c.catalogId, c]));
  const data = catalog.data;
  const found = useMemo(() => searchCatalog(data?.entries ?? [], search), [data, search]);
  const groups = (data?.groups ?? [])
    .map((g) => ({ group: g, entries: found.filter((e) => groupOf(e) === g.id) }))
    .filter((g) => g.entries.length);
  const grouped = new Set(groups.map((g) => g.group.id));
  const singles = found.filter((e) => !groupOf(e) || !grouped.has(groupOf(e)!));
  // Until "Show all": the first rows; on a narrow screen with nothing searched, the first few cards, groups among them.
  const fewCards = narrow && !search && !showAll;
  const shownGroups = fewCards ? groups.slice(0, NARROW_CARDS) : groups;
  const shownSingles = showAll ? singles : singles.slice(0, fewCards ? NARROW_CARDS - shownGroups.length : FIRST_ROWS);
  const cards = groups.length + singles.length;
  const hidden = cards - shownGroups.length - shownSingles.length;
  const doRetry = () => retry.mutate();

  return (
    <div>
      <div className="search">
        <label htmlFor="catalog-search" className="sr-only">
          Search connectors
        </label>
        <input
          id="catalog-search"
          ref={searchRef}
          type="search"
          placeholder="Search connectors"
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
          aria-controls="catalog-results"
        />
      </div>

      <div id="catalog-results" ref={resultsRef} aria-busy={catalog.isFetching || search !== typed.trim()}>
        {catalog.isPending ? (
          <p className="muted" role="status">
            Loading connectors…
          </p>
        ) : catalog.isError && !data ? (
          <ErrorNote error={catalog.error} title="The connector list could not be loaded." onRetry={doRetry} retrying={retry.isPending} />
        ) : (
          <>
            {/* Offline machines meet this on every visit: a quiet line, not an error; the built-in list is all there. */}
            {data?.registry.state === 'failed' && (
              <div className="note note-quiet registry-note" role="status">
                <span title={data.registry.error}>The MCP Registry could not be reached, so only the built-in connectors are shown.</span>
                <button type="button" className="button quiet" onClick={doRetry} disabled={retry.isPending}>
                  {retry.isPending ? 'Retrying…' : 'Retry'}
                </button>
              </div>
            )}
            {data?.registry.state === 'loading' && (
              <p className="muted small" role="status">
                Loading more connectors from the MCP Registry…
              </p>
            )}
            {retry.isError && <ErrorNote error={retry.error} title="Retry failed." />}
            {data && !found.length ? (
              search ? (
                <p className="empty">No connector matches “{search}”. Try another word, or add the server below.</p>
              ) : (
                <div className="empty">
                  <span>No connectors to show.</span>
                  <button type="button" className="button" onClick={doRetry} disabled={retry.isPending}>
                    {retry.isPending ? 'Retrying…' : 'Retry'}
                  </button>
                </div>
              )
            ) : (
              <>
                {shownGroups.map(({ group, entries }) => (
                  <GroupCard key={group.id} root={root} group={group} entries={entries} mine={mine} flow={flow} />
                ))}
                {shownSingles.length > 0 && (
                  <ul className="rows" aria-label="Connectors">
                    {shownSingles.map((entry) => (
                      <EntryRow
                        key={entry.id}
                        root={root}
                        policy={policy}
                        entry={entry}
                        added={mine.has(entry.id)}
                        connections={connections}
                        flow={flow}
                      />
                    ))}
                  </ul>
                )}
                {hidden > 0 && (
                  <button
                    type="button"
                    className="button more"
                    onClick={() => {
                      setRevealFrom(cards - hidden);
                      setShowAll(true);
                    }}
                  >
                    Show all {cards} connectors
                  </button>
                )}
              </>
            )}
          </>
        )}
      </div>

      <details className="disclosure" onKeyDown={closeDisclosureOnEscape}>
        <summary>Add a server that is not listed</summary>
        <div className="kind-choice" role="radiogroup" aria-label="How the server runs">
          <label className="check">
            <input type="radio" name="unlisted-kind" checked={unlisted === 'remote'} onChange={() => setUnlisted('remote')} />
            <span>Remote, by its URL</span>
          </label>
          <label className="check">
            <input type="radio" name="unlisted-kind" checked={unlisted === 'local'} onChange={() => setUnlisted('local')} />
            <span>Local, a command run on this machine</span>
          </label>
        </div>
        {unlisted === 'remote' ? (
          <AddServerForm root={root} connections={connections} flow={flow} announce={announce} />
        ) : (
          <AddLocalServerForm root={root} policy={policy} flow={flow} announce={announce} />
        )}
      </details>

      <ImportPanel root={root} announce={announce} />
    </div>
  );
}

/** Escape folds the disclosure and puts focus back on its summary. */
function closeDisclosureOnEscape(event: KeyboardEvent<HTMLDetailsElement>): void {
  const details = event.currentTarget;
  if (!details.open) return;
  closeOnEscape(() => {
    details.open = false;
    details.querySelector('summary')?.focus();
  })(event);
}

function EntryRow({
  root,
  policy,
  entry,
  added,
  connections,
  flow,
}: {
  root: string;
  policy: PlacePolicy['kind'] | undefined;
  entry: CatalogEntry;
  added: boolean;
  connections: Connection[];
  flow: ConnectFlow;
}) {
  const client = useQueryClient();
  const [askKey, setAskKey] = useState(false);
  const [secret, setSecret] = useState<SecretChoice>(emptySecretChoice);
  const local = entry.transport === 'stdio' ? entry.local : undefined;
  const [variables, setVariables] = useState<VariableChoice[]>(() =>
    (local?.env ?? []).map((v, i) => newVariable(i, v.name, v.required, v.description)),
  );
  // When the key form closes, focus goes back to Connect, and on to "Added" once the connection is listed,
  // unless the person has moved on meanwhile.
  const actionsRef = useRef<HTMLDivElement>(null);
  const returnFocus = useRef(false);
  const closeForm = () => {
    returnFocus.current = true;
    setAskKey(false);
  };
  useEffect(() => {
    const actions = actionsRef.current;
    if (!returnFocus.current || askKey || !actions) return;
    const active = document.activeElement;
    if (active && active !== document.body && !actions.contains(active)) {
      returnFocus.current = false;
      return;
    }
    actions.querySelector<HTMLElement>('button, [tabindex]')?.focus();
    if (added) returnFocus.current = false;
  }, [askKey, added]);
  const connect = useMutation({
    mutationFn: async () => {
      const existing = client.getQueryData(secretsQuery(root).queryKey)?.names;
      const secretName =
        entry.auth === 'api-key' ? await resolveSecret(secret, (n, v, replace) => putSecret(root, n, v, replace), existing) : undefined;
      const env = local ? await resolveVariables(root, variables, existing) : undefined;
      const { connection } = await addFromCatalog(root, entry.id, secretName, env);
      await client.invalidateQueries({ queryKey: ['secrets', root] });
      await connectAdded(flow, connection, entry.auth === 'oauth');
    },
    onSuccess: closeForm,
  });
  useClearWhenFixed(root, connect, connections);
  // A local server is added once the person has seen what it runs and reaches (and given its variables).
  const start = () => ((entry.auth === 'api-key' || local) && !askKey ? setAskKey(true) : connect.mutate());
  return (
    <li className="row-wrap" data-card>
      <div className="row">
        <Initial name={entry.name} />
        <div className="row-main">
          <div className="row-title">
            <span className="name">{entry.name}</span>
            <span className="badge">{local ? 'Runs here' : AUTH_WORDS[entry.auth]}</span>
            {entry.source === 'registry' && <span className="badge quiet">Registry</span>}
            {entry.source === 'custom' && <span className="badge quiet">Your catalog</span>}
          </div>
          <div className="row-detail">{entry.description}</div>
        </div>
        <div className="row-actions" ref={actionsRef}>
          {added ? (
            <span className="muted small" tabIndex={-1}>
              Added
            </span>
          ) : (
            !askKey && (
              <button type="button" className="button" onClick={start} disabled={connect.isPending} aria-label={`Connect ${entry.name}`}>
                {connect.isPending ? 'Connecting…' : 'Connect'}
              </button>
            )
          )}
        </div>
      </div>
      {askKey && local && (
        <form
          className="inline-form"
          aria-label={`Add ${entry.name}`}
          ref={focusFirstField}
          onKeyDown={closeOnEscape(closeForm)}
          onSubmit={(event) => {
            event.preventDefault();
            connect.mutate();
          }}
        >
          <LocalEntrySummary command={local.command} args={local.args} hosts={local.hosts} policy={policy} />
          <DeclaredVariables root={root} variables={variables} onChange={setVariables} />
          <div className="form-actions">
            <button type="submit" className="button primary" disabled={connect.isPending}>
              {connect.isPending ? 'Starting…' : `Add ${entry.name}`}
            </button>
            <button type="button" className="button" onClick={closeForm}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {askKey && !local && (
        <form
          className="inline-form"
          aria-label={`API key for ${entry.name}`}
          ref={focusFirstField}
          onKeyDown={closeOnEscape(closeForm)}
          onSubmit={(event) => {
            event.preventDefault();
            connect.mutate();
          }}
        >
          <p className="muted small">
            {entry.name} takes an API key{entry.transport !== 'stdio' && entry.apiKey ? ` in the ${entry.apiKey.header} header` : ''}. It is
            kept as a secret of this place.
          </p>
          <SecretPicker root={root} value={secret} onChange={setSecret} />
          <div className="form-actions">
            <button type="submit" className="button primary" disabled={connect.isPending}>
              {connect.isPending ? 'Connecting…' : `Connect ${entry.name}`}
            </button>
            <button type="button" className="button" onClick={closeForm}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {connect.isError && <ErrorNote error={connect.error} title={`${entry.name} is not connected.`} />}
    </li>
  );
}

/**
 * What a local catalog entry runs and reaches, said before it is added: its command line, and the
 * hosts it declares or, else, the registry its launcher installs from here, which is added to what
 * it may reach under the place and strict policies.
 */
function LocalEntrySummary({
  command,
  args,
  hosts,
  policy,
}: {
  command: string;
  args: string[];
  hosts: string[] | undefined;
  policy: PlacePolicy['kind'] | undefined;
}) {
  const install = useInstallHosts(hosts ? '' : command);
  const reach = hosts ?? install;
  return (
    <>
      <p className="muted small">
        It runs <code>{[command, ...args].join(' ')}</code> on this machine
        {policy === 'machine' ? ', as the account that runs this app' : ', in this place’s sandbox'}.
      </p>
      {reach.length > 0 && (
        <p className={policy === 'strict' ? 'note note-warn' : 'hint'} role="note">
          {hosts ? 'It needs' : `${command} installs it from`} {reach.join(', ')}: under the place and strict policies it may reach{' '}
          {reach.length === 1 ? 'that host' : 'those hosts'} too
          {policy === 'strict' ? ', besides this strict place’s own list.' : '.'}
        </p>
      )}
    </>
  );
}

/** How a group's service added here stands, on its chip. */
function chipState(connection: Connection, signingIn: boolean): string {
  if (signingIn) return 'signing in…';
  if (connection.state === 'sign-in') return connection.signIn?.state === 'failed' ? 'sign-in failed' : 'not signed in';
  return STATE_WORDS[connection.state].toLowerCase();
}

/**
 * Several services behind one provider login, as one card whatever their states: a chip per
 * service (its state once added), and one button that connects every picked service not connected yet.
 */
function GroupCard({
  root,
  group,
  entries,
  mine,
  flow,
}: {
  root: string;
  group: SignInGroup;
  entries: CatalogEntry[];
  mine: Map<string, Connection>;
  flow: ConnectFlow;
}) {
  const client = useQueryClient();
  const open = entries.filter((e) => mine.get(e.id)?.state !== 'connected');
  const [unpicked, setUnpicked] = useState<Set<string>>(new Set());
  const picked = open.filter((e) => !unpicked.has(e.id));
  const connect = useMutation({
    mutationFn: async () => {
      const made: Connection[] = [];
      // Services added before (their sign-in failed or was never finished) are connected as they are.
      for (const entry of picked) made.push(mine.get(entry.id) ?? (await addFromCatalog(root, entry.id)).connection);
      await client.invalidateQueries({ queryKey: ['place-connections', root] });
      try {
        await flow.connectMany(group.name, made);
      } catch (error) {
        throw new AddedButNotConnected(
          `${made.map((c) => c.displayName).join(', ')} ${made.length === 1 ? 'is' : 'are'} in Connected, but connecting failed: ${messageOf(error)}`,
          made.map((c) => c.name),
        );
      }
    },
  });
  useClearWhenFixed(root, connect, [...mine.values()]);
  const toggle = (id: string) =>
    setUnpicked((set) => {
      const next = new Set(set);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const n = picked.length;
  return (
    <div className="card" role="group" aria-labelledby={`group-${group.id}`} data-card>
      <div className="row">
        <Initial name={group.name} />
        <div className="row-main">
          <div className="row-title">
            <span className="name" id={`group-${group.id}`}>
              {group.name}
            </span>
            <span className="badge">Sign-in</span>
          </div>
          <div className="row-detail">{group.description}</div>
        </div>
      </div>
      <div className="chips" role="group" aria-label={`${group.name} services`}>
        {entries.map((e) => {
          const connection = mine.get(e.id);
          const label = connection
            ? `${e.name} · ${chipState(
                connection,
                flow.pending.some((p) => p.name === connection.name),
              )}`
            : e.name;
          return connection?.state === 'connected' ? (
            <span key={e.id} className="chip chip-connected">
              {label}
            </span>
          ) : (
            <button
              key={e.id}
              type="button"
              className="chip"
              aria-pressed={!unpicked.has(e.id)}
              onClick={() => toggle(e.id)}
              title={e.description}
            >
              {label}
            </button>
          );
        })}
      </div>
      {open.length > 0 && (
        <div className="form-actions">
          <button type="button" className="button primary" disabled={!n || connect.isPending} onClick={() => connect.mutate()}>
            {connect.isPending ? 'Connecting…' : `Connect ${n} ${n === 1 ? 'service' : 'services'}`}
          </button>
        </div>
      )}
      {connect.isError && <ErrorNote error={connect.error} title={`${group.name} is not connected.`} />}
    </div>
  );
}

/** A remote entry's sign-in group (local servers have none). */
function groupOf(entry: CatalogEntry): string | undefined {
  return entry.transport === 'stdio' ? undefined : entry.signInGroup;
}
