import { useQuery } from '@tanstack/react-query';
import { useEffect, useId } from 'react';
import { secretsQuery } from '../../api/connections';

export const NEW_SECRET = '+new';

export interface SecretChoice {
  /** An existing secret's name, or NEW_SECRET. */
  pick: string;
  newName: string;
  newValue: string;
  /** The new secret's name is one the place has: the person agreed to replace its value. */
  replace: boolean;
}

export const emptySecretChoice = (): SecretChoice => ({ pick: '', newName: '', newValue: '', replace: false });

/** The place secret a value (an API key, a server's variable) is taken from: one the place has, or a new one made here. */
export function SecretPicker({
  root,
  value,
  onChange,
  legend = 'API key, from a secret of this place',
  valueLabel = 'Value (the API key)',
  optional = false,
}: {
  root: string;
  value: SecretChoice;
  onChange: (next: SecretChoice) => void;
  legend?: string;
  valueLabel?: string;
  /** No secret is a choice (a variable the server does not need). */
  optional?: boolean;
}) {
  const secrets = useQuery(secretsQuery(root));
  const id = useId();
  const names = secrets.data?.names ?? [];
  const pick = value.pick;
  const noSecrets = secrets.isSuccess && !names.length;
  // A place without secrets: the only choice is a new one.
  useEffect(() => {
    if (noSecrets && !value.pick && !optional) onChange({ ...value, pick: NEW_SECRET });
  }, [noSecrets, value, onChange, optional]);
  return (
    <fieldset className="fieldset">
      <legend>{legend}</legend>
      <label className="field">
        <span className="field-label">Secret</span>
        <select id={`${id}-pick`} value={pick} onChange={(e) => onChange({ ...value, pick: e.target.value })} required={!optional}>
          {!secrets.isSuccess && <option value="">{secrets.isError ? 'Secrets unavailable' : 'Loading secrets…'}</option>}
          {secrets.isSuccess && (names.length > 0 || optional) && (
            <option value="">{optional ? 'None: not set' : 'Choose a secret'}</option>
          )}
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
          <option value={NEW_SECRET}>New secret…</option>
        </select>
      </label>
      {pick === NEW_SECRET && (
        <div className="field-row">
          <label className="field">
            <span className="field-label">Secret name</span>
            <input
              value={value.newName}
              onChange={(e) => onChange({ ...value, pick: NEW_SECRET, newName: e.target.value })}
              required
              pattern="[A-Za-z0-9_.\-]{1,64}"
              title="1 to 64 letters, digits, _ . or -"
              placeholder="e.g. ISSUES_API_KEY"
              autoComplete="off"
            />
          </label>
          <label className="field">
            <span className="field-label">{valueLabel}</span>
            <input
              type="password"
              value={value.newValue}
              onChange={(e) => onChange({ ...value, pick: NEW_SECRET, newValue: e.target.value })}
              required
              autoComplete="off"
            />
          </label>
        </div>
      )}
      {pick === NEW_SECRET && names.includes(value.newName.trim()) && (
        // Saving would overwrite a secret other connections may use: ask first.
        <label className="field-check note note-warn">
          <input type="checkbox" checked={value.replace} onChange={(e) => onChange({ ...value, replace: e.target.checked })} required />
          <span>
            This place already has a secret named {value.newName.trim()}. Replace its value? Every connection that uses it will send the new
            one.
          </span>
        </label>
      )}
    </fieldset>
  );
}

/** The chosen secret's name, creating it first when it is new (replacing one of that name only when agreed). */
export async function resolveSecret(
  choice: SecretChoice,
  save: (name: string, value: string, replace: boolean) => Promise<void>,
  existing: readonly string[] = [],
): Promise<string> {
  const pick = choice.pick;
  if (pick === NEW_SECRET) {
    const name = choice.newName.trim();
    if (!name || !choice.newValue) throw new Error('Give the new secret a name and a value.');
    if (existing.includes(name) && !choice.replace)
      throw new Error(`This place already has a secret named ${name}: agree to replace its value, or choose another name.`);
    // The server refuses to replace one without the agreement, also one this page did not know of yet.
    await save(name, choice.newValue, existing.includes(name) && choice.replace);
    return name;
  }
  if (!pick) throw new Error('Choose the secret that holds the API key, or make a new one.');
  return pick;
}
