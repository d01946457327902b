import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { isValidSkillName, SKILL_DESCRIPTION_MAX_CHARS, SKILL_NAME_MAX_CHARS } from '../../../common/skill-file.js';
import { createSkill, skillsQuery } from '../../api/skills';
import { messageOf } from '../../ui/ErrorNote';

/** A new skill: its name and description; the host writes SKILL.md from a template. */
export function CreateSkillForm({
  announce,
  onCreated,
  onCancel,
}: {
  announce: (m: string) => void;
  onCreated: (name: string) => void;
  onCancel: () => void;
}) {
  const client = useQueryClient();
  const listing = useQuery(skillsQuery);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);

  const taken = new Set([...(listing.data?.skills.map((s) => s.name) ?? []), ...(listing.data?.invalid.map((s) => s.folder) ?? [])]);
  const nameProblem = !name
    ? ''
    : !isValidSkillName(name)
      ? `Use lowercase letters, digits and single hyphens (at most ${SKILL_NAME_MAX_CHARS}), not starting or ending with a hyphen; for example pdf-tools.`
      : taken.has(name)
        ? `A skill named ${name} already exists. Pick another name.`
        : '';
  const ready = name !== '' && !nameProblem && description.trim() !== '';

  const create = useMutation({
    mutationFn: () => createSkill(name, description.trim()),
    onSuccess: async (detail) => {
      client.setQueryData(['skills', detail.name], detail);
      // Refetched even while no list is on screen, so the list is current when it comes back.
      await client.invalidateQueries({ queryKey: ['skills'], exact: true, refetchType: 'all' });
      announce(`${detail.name} was created from the template. Edit it to write its instructions.`);
      onCreated(detail.name);
    },
  });

  return (
    <section aria-labelledby="new-skill-heading" className="group">
      <button type="button" className="button quiet skills-back" onClick={onCancel}>
        ← All skills
      </button>
      <h2 id="new-skill-heading" className="skills-title" tabIndex={-1} ref={headingRef}>
        New skill
      </h2>
      <form
        className="panel"
        aria-labelledby="new-skill-heading"
        onSubmit={(event) => {
          event.preventDefault();
          if (ready) create.mutate();
        }}
      >
        <label className="field">
          <span className="field-label">Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={SKILL_NAME_MAX_CHARS}
            autoComplete="off"
            spellCheck={false}
            placeholder="pdf-tools"
            aria-invalid={nameProblem ? true : undefined}
            aria-describedby="new-skill-name-hint"
          />
          <span id="new-skill-name-hint" className={nameProblem ? 'field-error' : 'hint'} aria-live="polite">
            {nameProblem || 'Also the name of its folder, and what agents ask the skill tool for.'}
          </span>
        </label>
        <label className="field">
          <span className="field-label">Description</span>
          <textarea
            className="skills-description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            required
            maxLength={SKILL_DESCRIPTION_MAX_CHARS}
            rows={3}
            aria-describedby="new-skill-description-hint"
          />
          <span id="new-skill-description-hint" className="hint">
            What the skill does and when an agent should use it: agents choose skills by this line. {description.length}/
            {SKILL_DESCRIPTION_MAX_CHARS}
          </span>
        </label>
        <div className="form-actions">
          <button type="submit" className="button primary" disabled={!ready || create.isPending}>
            {create.isPending ? 'Creating…' : 'Create skill'}
          </button>
          <button type="button" className="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
        {create.isError && (
          <p className="field-error" role="alert">
            {messageOf(create.error)}
          </p>
        )}
      </form>
    </section>
  );
}
