import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { LimitName } from '../../../common/api/places.js';
import { putLimits, putSeals } from '../../api/connections';
import type { Place, PlacePolicy } from '../../api/connections';
import { ErrorNote } from '../../ui/ErrorNote';
import { SaveCancel } from '../../ui/SaveCancel';

const LIMIT_WORDS: Record<LimitName, string> = {
  processes: 'Processes and threads at once',
  memoryMb: 'Memory, MiB (files in its /tmp count too)',
  tmpMb: 'Size of its private /tmp, MiB',
};
const LIMIT_NAMES = Object.keys(LIMIT_WORDS) as LimitName[];

/** The limits this machine does not enforce, in words; empty when it enforces them all. */
export function unenforcedWords(policy: PlacePolicy): string {
  const inEffect = policy.limitsInEffect;
  if (!inEffect) return '';
  return LIMIT_NAMES.filter((name) => inEffect[name].unenforced)
    .map((name) => `${LIMIT_WORDS[name].split(',')[0]!.toLowerCase()} (${inEffect[name].unenforced})`)
    .join('; ');
}

/** Shared by both forms: save, then say so and show the policy as the server now has it. */
function useSave<T>(place: Place, announce: (message: string) => void, done: string, save: (value: T) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: save,
    onSuccess: async () => {
      announce(`${place.label}: ${done}`);
      await client.invalidateQueries({ queryKey: ['place-connections', place.root] });
    },
  });
}

/**
 * What the sandbox of a place or strict place seals from its agents (the credential stores, each
 * lifted or not, and paths of the owner's), and the limits of its commands as applied here.
 */
export function PlaceSandboxFields({
  place,
  policy,
  announce,
}: {
  place: Place;
  policy: PlacePolicy;
  announce: (message: string) => void;
}) {
  return (
    <>
      <SealsForm place={place} policy={policy} announce={announce} />
      <LimitsForm place={place} policy={policy} announce={announce} />
    </>
  );
}

function SealsForm({ place, policy, announce }: { place: Place; policy: PlacePolicy; announce: (message: string) => void }) {
  const stores = policy.credentialStores ?? [];
  const savedLifted = stores.filter((s) => s.lifted).map((s) => s.name);
  const savedPaths = (policy.seal ?? []).join('\n');
  const [lifted, setLifted] = useState(savedLifted);
  const [paths, setPaths] = useState(savedPaths);
  // A change saved elsewhere (the CLI) replaces what the form shows.
  const saved = `${savedLifted.join('\n')}|${savedPaths}`;
  const [shown, setShown] = useState(saved);
  if (shown !== saved) {
    setShown(saved);
    setLifted(savedLifted);
    setPaths(savedPaths);
  }
  const seal = paths
    .split('\n')
    .map((p) => p.trim())
    .filter(Boolean);
  const changed =
    `${[...lifted].sort().join('\n')}|${seal.join('\n')}` !== `${[...savedLifted].sort().join('\n')}|${(policy.seal ?? []).join('\n')}`;
  const save = useSave(place, announce, 'what its agents find sealed was saved.', () => putSeals(place.root, seal, lifted));
  const undo = () => {
    setLifted(savedLifted);
    setPaths(savedPaths);
    save.reset();
  };

  return (
    <form
      className="policy-part"
      aria-label="Sealed from the agents"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <fieldset>
        <legend>Sealed from the agents of {place.label}: the credential stores (untick one to lift it for this place)</legend>
        <ul className="seal-list">
          {stores.map((store) => (
            <li key={store.name}>
              <label>
                <input
                  type="checkbox"
                  checked={!lifted.includes(store.name)}
                  onChange={(e) => setLifted(e.target.checked ? lifted.filter((name) => name !== store.name) : [...lifted, store.name])}
                />{' '}
                <code>{store.name}</code> <span className="muted">{store.what}</span>
              </label>
            </li>
          ))}
        </ul>
      </fieldset>
      <label className="field">
        <span className="field-label">More paths sealed (absolute or ~/…, one per line)</span>
        <textarea rows={2} value={paths} onChange={(e) => setPaths(e.target.value)} spellCheck={false} />
      </label>
      {save.isError && <ErrorNote error={save.error} title="What is sealed was not changed." />}
      {changed && <SaveCancel label="Save sealed paths" pending={save.isPending} onCancel={undo} />}
    </form>
  );
}

function LimitsForm({ place, policy, announce }: { place: Place; policy: PlacePolicy; announce: (message: string) => void }) {
  const inEffect = policy.limitsInEffect;
  const savedValues = Object.fromEntries(LIMIT_NAMES.map((name) => [name, policy.limits?.[name]?.toString() ?? ''])) as Record<
    LimitName,
    string
  >;
  const [values, setValues] = useState(savedValues);
  const saved = JSON.stringify(savedValues);
  const [shown, setShown] = useState(saved);
  if (shown !== saved) {
    setShown(saved);
    setValues(savedValues);
  }
  const changed = JSON.stringify(values) !== saved;
  // An empty field is the machine's default; the server says what is wrong with any other.
  const limits = Object.fromEntries(LIMIT_NAMES.filter((name) => values[name].trim() !== '').map((name) => [name, Number(values[name])]));
  const save = useSave(place, announce, 'the limits of its commands were saved.', () => putLimits(place.root, limits));
  if (!inEffect) return null;
  const undo = () => {
    setValues(savedValues);
    save.reset();
  };

  return (
    <form
      className="policy-part"
      aria-label="Limits of the commands"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <fieldset>
        <legend>Limits of the commands of {place.label}, all together (empty: the machine’s default)</legend>
        {LIMIT_NAMES.map((name) => {
          const limit = inEffect[name];
          const note = `${name}-note`;
          return (
            <label className="field" key={name}>
              <span className="field-label">{LIMIT_WORDS[name]}</span>
              <input
                type="number"
                min={1}
                inputMode="numeric"
                value={values[name]}
                placeholder={limit.byDefault ? `${limit.value} (default)` : ''}
                onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                aria-describedby={note}
              />
              <span id={note} className={limit.unenforced ? 'warning' : 'muted'}>
                {limit.unenforced
                  ? `Not enforced on this machine: ${limit.unenforced}.`
                  : `In effect: ${limit.value}${limit.byDefault ? ' (the machine’s default)' : ''}.`}
              </span>
            </label>
          );
        })}
      </fieldset>
      {save.isError && <ErrorNote error={save.error} title="The limits were not changed." />}
      {changed && <SaveCancel label="Save limits" pending={save.isPending} onCancel={undo} />}
    </form>
  );
}
