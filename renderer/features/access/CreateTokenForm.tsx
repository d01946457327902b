import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { createToken, type CreatedToken } from '../../api/access';
import type { Place } from '../../api/connections';
import { messageOf } from '../../ui/ErrorNote';

/** What the API takes as a lifetime (`<n>d` or `never`), in words. */
const LIFETIMES = [
  { value: '1d', label: '1 day' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: '365d', label: '1 year' },
  { value: 'never', label: 'Never (revoke it when done)' },
];

/** The select's value for a token bound to no place: the agent names one in its URL, else it works in This machine. */
const ANY_PLACE = '';

export function CreateTokenForm({ places, onCreated }: { places: Place[]; onCreated: (token: CreatedToken) => void }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [place, setPlace] = useState(ANY_PLACE);
  const [expires, setExpires] = useState('30d');
  const create = useMutation({
    mutationFn: () => createToken({ name: name.trim(), expires, ...(place !== ANY_PLACE && { workspacePath: place }) }),
    onSuccess: async ({ token }) => {
      setName('');
      onCreated(token);
      await client.invalidateQueries({ queryKey: ['tokens'] });
    },
  });
  // This machine is the place of tokens bound to none; a token cannot name it.
  const boundable = places.filter((p) => p.root !== '');

  return (
    <form
      className="inline-form token-form"
      aria-label="Create a token"
      onSubmit={(event) => {
        event.preventDefault();
        if (name.trim()) create.mutate();
      }}
    >
      <div className="token-fields">
        <label className="field">
          <span className="field-label">Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={64}
            required
            placeholder="e.g. Claude Code on my laptop"
            aria-describedby="token-name-hint"
          />
          <span id="token-name-hint" className="hint">
            So you know which agent it is, here and in the activity.
          </span>
        </label>
        <label className="field">
          <span className="field-label">Place</span>
          <select value={place} onChange={(e) => setPlace(e.target.value)} aria-describedby="token-place-hint">
            <option value={ANY_PLACE}>This machine, or the URL’s place</option>
            {boundable.map((p) => (
              <option key={p.root} value={p.root}>
                {p.label}
              </option>
            ))}
          </select>
          <span id="token-place-hint" className="hint">
            {place === ANY_PLACE ? (
              <>
                The agent works in This machine, or in the place its URL names:{' '}
                <code>/mcp?workspace_path={boundable[0]?.root ?? 'Crew/<id>'}</code>.
              </>
            ) : (
              'The agent works in this place only, with its connections.'
            )}
          </span>
        </label>
        <label className="field">
          <span className="field-label">Expires after</span>
          <select value={expires} onChange={(e) => setExpires(e.target.value)}>
            {LIFETIMES.map((l) => (
              <option key={l.value} value={l.value}>
                {l.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={create.isPending || !name.trim()}>
          {create.isPending ? 'Creating…' : 'Create token'}
        </button>
      </div>
      {create.isError && (
        <p className="field-error" role="alert">
          The token was not created. {messageOf(create.error)}
        </p>
      )}
    </form>
  );
}
