import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { importPlanQuery, runImport } from '../../api/connections';
import type { ImportItem } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { STATE_WORDS } from './ConnectedList';

const SCOPE_WORDS = { user: 'yours', project: 'this place’s folder' } as const;

/**
 * Import from the MCP clients on this machine: what each server of Claude Desktop's, Cursor's, VS
 * Code's and Claude Code's configurations would become in this place (read when the panel opens),
 * and the ones the person picks added. Literal keys become secrets of the place; the clients'
 * files are only read.
 */
export function ImportPanel({ root, announce }: { root: string; announce: (m: string) => void }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const plan = useQuery(importPlanQuery(root, open));
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const run = useMutation({
    mutationFn: () => runImport(root, [...picked]),
    onSuccess: ({ results }) => {
      setPicked(new Set());
      const added = results.filter((r) => r.added).length;
      announce(
        `${added} of ${results.length} ${results.length === 1 ? 'server' : 'servers'} imported${added < results.length ? '; see below why the others were not' : ''}.`,
      );
    },
    onSettled: async () => {
      await Promise.all(['place-connections', 'secrets', 'import-plan'].map((key) => client.invalidateQueries({ queryKey: [key, root] })));
    },
  });
  const items = plan.data?.items ?? [];
  const usable = items.filter((i) => !i.problem);
  const toggle = (id: string) =>
    setPicked((set) => {
      const next = new Set(set);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <details className="disclosure import" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Import from Claude Desktop, Cursor, VS Code or Claude Code</summary>
      <div className="panel-body">
        <p className="muted small">
          The MCP servers configured in the clients on this machine (yours, and those of this place’s folder), as they would be added here.
          A key or token written in those files becomes a secret of this place. Nothing is written to those files.
        </p>
        {plan.isPending ? (
          <p className="muted" role="status">
            Reading the clients’ configurations…
          </p>
        ) : plan.isError ? (
          <ErrorNote
            error={plan.error}
            title="The clients’ configurations could not be read."
            onRetry={() => void plan.refetch()}
            retrying={plan.isFetching}
          />
        ) : (
          <>
            {plan.data.problems.map((p) => (
              <p key={p.file} className="note note-warn" role="note">
                {p.problem}
              </p>
            ))}
            {items.length === 0 ? (
              <p className="empty">
                No MCP servers are configured in those clients
                {plan.data.files.some((f) => f.found) ? '' : ': none of their configuration files is on this machine'}.
              </p>
            ) : (
              <form
                aria-label="Servers to import"
                onSubmit={(event) => {
                  event.preventDefault();
                  run.mutate();
                }}
              >
                <ul className="rows" aria-label="Servers in the clients’ configurations">
                  {items.map((item) => (
                    <ImportRow key={item.id} item={item} picked={picked.has(item.id)} onToggle={() => toggle(item.id)} />
                  ))}
                </ul>
                <div className="form-actions import-actions">
                  <button type="submit" className="button primary" disabled={picked.size === 0 || run.isPending}>
                    {run.isPending
                      ? 'Importing…'
                      : picked.size
                        ? `Import ${picked.size} ${picked.size === 1 ? 'server' : 'servers'}`
                        : 'Pick the servers to import'}
                  </button>
                  {usable.length > 1 && picked.size < usable.length && (
                    <button type="button" className="button quiet" onClick={() => setPicked(new Set(usable.map((i) => i.id)))}>
                      Pick all {usable.length}
                    </button>
                  )}
                </div>
              </form>
            )}
            <details className="files-read">
              <summary className="hint">The files read</summary>
              <ul className="hint">
                {plan.data.files.map((f) => (
                  <li key={`${f.client}:${f.path}`}>
                    <code>{f.path}</code> {f.found ? '' : '(not there)'}
                  </li>
                ))}
              </ul>
            </details>
          </>
        )}
        {run.isError && <ErrorNote error={run.error} title="Nothing was imported." />}
        {run.data && (
          <ul className="import-results" aria-label="What was imported">
            {run.data.results.map((r) => (
              <li key={r.id} className={r.added ? undefined : 'field-error'}>
                {r.added
                  ? `${r.name}: added as ${r.added.displayName}, ${STATE_WORDS[r.added.state].toLowerCase()}${r.added.reason ? ` (${r.added.reason})` : ''}.`
                  : `${r.name}: not added. ${r.error}`}
              </li>
            ))}
          </ul>
        )}
      </div>
    </details>
  );
}

function ImportRow({ item, picked, onToggle }: { item: ImportItem; picked: boolean; onToggle: () => void }) {
  const id = `import-${item.id}`;
  const adds =
    item.adds &&
    ('url' in item.adds
      ? `${item.adds.url}${item.adds.header ? `, with its ${item.adds.header.name} header` : ''}`
      : `runs ${item.adds.commandLine}`);
  return (
    <li className="row-wrap">
      <div className="row">
        <input id={id} type="checkbox" checked={picked} disabled={!!item.problem} onChange={onToggle} aria-describedby={`${id}-detail`} />
        <div className="row-main">
          <label className="row-title" htmlFor={id}>
            <span className="name">{item.name}</span>
            <span className="badge">{item.kind === 'local' ? 'Runs here' : 'Remote'}</span>
            <span className="badge quiet">
              {item.clientName}, {SCOPE_WORDS[item.scope]}
            </span>
          </label>
          <div className="row-detail" id={`${id}-detail`}>
            {item.problem ? <span className="reason">{item.problem}</span> : adds}
            {item.adds && 'hosts' in item.adds && item.adds.hosts.length > 0 && (
              <div>Under the place and strict policies it may also reach {item.adds.hosts.join(', ')}, where it is installed from.</div>
            )}
            {item.secrets.map((s) => (
              <div key={s.name}>
                New secret <strong>{s.name}</strong> of this place, from its {s.from}.
              </div>
            ))}
            {item.notes.map((n) => (
              <div key={n}>{n}</div>
            ))}
            <div className="hint" title={item.file}>
              From {item.file}
            </div>
          </div>
        </div>
      </div>
    </li>
  );
}
