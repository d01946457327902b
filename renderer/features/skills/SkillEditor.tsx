import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { parseSkillFile } from '../../../common/skill-file.js';
import { saveSkill } from '../../api/skills';
import { messageOf } from '../../ui/ErrorNote';
import { closeOnEscape } from '../../ui/keyboard';
import { sentence } from './sentence';

/**
 * SKILL.md in a text box, checked as it is typed with the same rules the host applies (so no round
 * trip): the problem shows under the box and Save stays off until it is fixed.
 */
export function SkillEditor({
  name,
  initial,
  version,
  announce,
  onDone,
}: {
  name: string;
  initial: string;
  version: string;
  announce: (m: string) => void;
  onDone: () => void;
}) {
  const client = useQueryClient();
  // What editing started from: the screen polls the file, and a change on disk meanwhile must make
  // Save answer with a conflict, never save over it.
  const [base] = useState({ text: initial, version });
  const [draft, setDraft] = useState(initial);
  const check = parseSkillFile(draft, name);
  const changed = draft !== base.text;
  const save = useMutation({
    mutationFn: () => saveSkill(name, draft, base.version),
    onSuccess: async (detail) => {
      client.setQueryData(['skills', name], detail);
      // Refetched even while no list is on screen, so the list is current when it comes back.
      await client.invalidateQueries({ queryKey: ['skills'], exact: true, refetchType: 'all' });
      announce(`${name} is saved.`);
      onDone();
    },
  });
  const submit = () => {
    if (check.ok && changed && !save.isPending) save.mutate();
  };

  return (
    <form
      className="skills-edit"
      aria-label={`Edit ${name}`}
      // Escape leaves an untouched editor; with changes it could throw work away, so it does nothing.
      onKeyDown={changed ? undefined : closeOnEscape(onDone)}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label className="field">
        <span className="field-label">SKILL.md</span>
        <textarea
          className="skills-editor"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            // Ctrl+S (⌘S) saves, as in an editor.
            if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
              e.preventDefault();
              submit();
            }
          }}
          spellCheck={false}
          autoFocus
          rows={22}
          aria-invalid={check.ok ? undefined : true}
          aria-describedby="skill-check"
        />
      </label>
      <p id="skill-check" className={check.ok ? 'skills-check-ok' : 'field-error'} aria-live="polite">
        {check.ok ? 'The frontmatter follows the Agent Skills rules.' : `${sentence(check.reason)} Save is off until this is fixed.`}
      </p>
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={!check.ok || !changed || save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
        {!changed && <span className="muted small">No changes yet.</span>}
      </div>
      {save.isError && (
        <p className="field-error" role="alert">
          {messageOf(save.error)}
        </p>
      )}
    </form>
  );
}
