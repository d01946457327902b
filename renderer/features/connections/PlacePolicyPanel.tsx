import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type KeyboardEvent } from 'react';
import { putPolicy } from '../../api/connections';
import type { Place, PlacePolicy } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { closeOnEscape } from '../../ui/keyboard';
import { SaveCancel } from '../../ui/SaveCancel';
import { PlaceSandboxFields, unenforcedWords } from './PlaceSandboxFields';

const WORDS: Record<PlacePolicy['kind'], { name: string; detail: string }> = {
  machine: { name: 'Whole machine', detail: 'Agents read, write and run anything this app’s account can.' },
  place: {
    name: 'Place',
    detail:
      'Agents read the machine except the app’s secrets and other places; they write only in this place’s folder, the temp folder and the folders below. Commands run sandboxed; their network reaches public hosts through the app’s proxy.',
  },
  strict: {
    name: 'Strict',
    detail:
      'Agents reach only this place’s folder and the folders below (system folders read-only). Commands run sandboxed; their network reaches only the hosts the owner lists (none: no network).',
  },
};

/** What the saved policy's sandboxed commands reach on the network. */
function networkWords(policy: PlacePolicy): string {
  const listed = policy.network ?? [];
  if (policy.kind === 'place') return listed.length ? `any public host, and ${listed.join(', ')}` : 'any public host';
  return listed.length ? `only ${listed.join(', ')}` : 'none';
}

/**
 * The place header's sandbox policy: what the place's agents reach, in one folded line that opens to
 * change it (by the person who runs the app, the only one the page serves), so that the screen
 * starts with the connections; under place and strict it also opens to what is sealed and the
 * limits. On a machine without a sandbox, says why its agents are refused; where it does not
 * enforce a limit, says which.
 */
export function PlacePolicyPanel({ place, policy, announce }: { place: Place; policy: PlacePolicy; announce: (message: string) => void }) {
  const client = useQueryClient();
  const [kind, setKind] = useState(policy.kind);
  const [folders, setFolders] = useState(policy.folders.join('\n'));
  // A policy saved elsewhere (the CLI) replaces what the form shows.
  const saved = `${policy.kind}:${policy.folders.join('\n')}`;
  const [shown, setShown] = useState(saved);
  if (shown !== saved) {
    setShown(saved);
    setKind(policy.kind);
    setFolders(policy.folders.join('\n'));
  }
  const list =
    kind === 'machine'
      ? []
      : folders
          .split('\n')
          .map((f) => f.trim())
          .filter(Boolean);
  const changed = kind !== policy.kind || list.join('\n') !== policy.folders.join('\n');
  const fold = useRef<HTMLDetailsElement>(null);
  const unenforced = unenforcedWords(policy);
  const undo = () => {
    setKind(policy.kind);
    setFolders(policy.folders.join('\n'));
    save.reset();
  };
  // Escape puts back what is saved and folds it, focus on its summary.
  const onKeyDown = (event: KeyboardEvent) => {
    const details = fold.current;
    if (!details?.open) return;
    closeOnEscape(() => {
      undo();
      details.open = false;
      details.querySelector('summary')?.focus();
    })(event);
  };

  const save = useMutation({
    mutationFn: () => putPolicy(place.root, kind, list),
    onSuccess: async ({ policy: saved }) => {
      setFolders(saved.folders.join('\n'));
      announce(`${place.label}: agents now work under the ${WORDS[saved.kind].name.toLowerCase()} policy.`);
      await client.invalidateQueries({ queryKey: ['place-connections', place.root] });
      // Done: it folds to its one line, which says the new policy, and the keyboard stays there.
      const details = fold.current;
      if (details) {
        details.open = false;
        details.querySelector('summary')?.focus();
      }
    },
  });

  return (
    <>
      <details className="disclosure policy-fold" ref={fold} onKeyDown={onKeyDown}>
        <summary>
          Agents here reach: <strong>{WORDS[policy.kind].name.toLowerCase()}</strong>
        </summary>
        <form
          className="policy"
          aria-label="Agent policy"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <label className="field">
            <span className="field-label">What the agents of {place.label} reach</span>
            <select value={kind} onChange={(e) => setKind(e.target.value as PlacePolicy['kind'])} aria-describedby="policy-detail">
              {(Object.keys(WORDS) as PlacePolicy['kind'][]).map((k) => (
                <option key={k} value={k}>
                  {WORDS[k].name}
                </option>
              ))}
            </select>
          </label>
          <p id="policy-detail" className="muted">
            {WORDS[kind].detail}
          </p>
          {kind !== 'machine' && (
            <label className="field">
              <span className="field-label">Extra folders the agents may read and write (absolute paths, one per line)</span>
              <textarea rows={2} value={folders} onChange={(e) => setFolders(e.target.value)} spellCheck={false} />
            </label>
          )}
          {policy.kind !== 'machine' && kind === policy.kind && (
            <p className="muted">
              Network of their commands: {networkWords(policy)}. Change the list with{' '}
              <code>persona-mcp-workspace places network {place.root || '.'} off|HOST…</code>
            </p>
          )}
          {save.isError && <ErrorNote error={save.error} title="The policy was not changed." />}
          {/* Only a change has something to save. */}
          {changed && <SaveCancel label="Save policy" pending={save.isPending} onCancel={undo} />}
        </form>
        {/* What the saved sandbox seals and limits; changed apart from the policy's kind. */}
        {policy.kind !== 'machine' && kind === policy.kind && <PlaceSandboxFields place={place} policy={policy} announce={announce} />}
      </details>
      {policy.problem && (
        <p className="note note-error" role="alert">
          {policy.problem}
        </p>
      )}
      {unenforced && <p className="note note-warning">Limits this machine does not enforce for its commands: {unenforced}.</p>}
    </>
  );
}
