import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { parseSkillFile, type SkillMetadata } from '../../../common/skill-file.js';
import type { SkillDetail } from '../../../common/api/skills.js';
import { deleteSkill, folderOpener, skillQuery } from '../../api/skills';
import { ConfirmInline } from '../../ui/ConfirmInline';
import { ErrorNote } from '../../ui/ErrorNote';
import { sentence } from './sentence';
import { SkillEditor } from './SkillEditor';
import { SkillMarkdown } from './SkillMarkdown';

interface Props {
  name: string;
  announce: (m: string) => void;
  onBack: () => void;
  onDeleted: () => void;
}

/** One skill: what agents get (description, instructions rendered, bundled files), Edit, Open folder, Delete. */
export function SkillView({ name, announce, onBack, onDeleted }: Props) {
  const client = useQueryClient();
  const skill = useQuery(skillQuery(name));
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const deleteRef = useRef<HTMLButtonElement>(null);
  const editRef = useRef<HTMLButtonElement>(null);
  const openFolder = folderOpener();

  useEffect(() => headingRef.current?.focus(), []);
  // Leaving the editor (saved or cancelled), the keyboard goes back to Edit, not to the page's top.
  const wasEditing = useRef(false);
  useEffect(() => {
    if (wasEditing.current && !editing) editRef.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  const remove = useMutation({
    mutationFn: () => deleteSkill(name),
    onSuccess: async () => {
      client.removeQueries({ queryKey: ['skills', name], exact: true });
      // Refetched even while no list is on screen, so the list is current when it comes back.
      await client.invalidateQueries({ queryKey: ['skills'], exact: true, refetchType: 'all' });
      announce(`${name} was deleted, with its folder.`);
      onDeleted();
    },
  });
  const open = useMutation({ mutationFn: () => openFolder!(name) });

  const detail = skill.data;
  const parsed = detail?.content != null ? parseSkillFile(detail.content, name) : undefined;

  return (
    <section aria-labelledby="skill-heading" className="group">
      <button type="button" className="button quiet skills-back" onClick={onBack}>
        ← All skills
      </button>
      <div className="skills-head">
        <div className="row-main">
          <h2 id="skill-heading" className="skills-title" tabIndex={-1} ref={headingRef}>
            {name}
          </h2>
          {parsed?.ok && <p className="muted">{parsed.skill.description}</p>}
        </div>
        {detail && !editing && (
          <div className="row-actions">
            {confirming ? (
              <ConfirmInline
                label={`Delete ${name}?`}
                question={<>Delete {name}? Its folder and every file in it go.</>}
                yes="Yes, delete"
                working="Deleting…"
                pending={remove.isPending}
                onYes={() => remove.mutate()}
                onNo={() => {
                  setConfirming(false);
                  remove.reset();
                  requestAnimationFrame(() => deleteRef.current?.focus());
                }}
              />
            ) : (
              <>
                <button type="button" className="button primary" ref={editRef} onClick={() => setEditing(true)}>
                  Edit
                </button>
                {openFolder && (
                  <button type="button" className="button" onClick={() => open.mutate()} disabled={open.isPending}>
                    Open folder
                  </button>
                )}
                <button type="button" className="button danger" ref={deleteRef} onClick={() => setConfirming(true)}>
                  Delete
                </button>
              </>
            )}
          </div>
        )}
      </div>

      {!detail ? (
        skill.isError ? (
          <ErrorNote
            error={skill.error}
            title={`${name} could not be loaded.`}
            onRetry={() => void skill.refetch()}
            retrying={skill.isFetching}
          />
        ) : (
          <p className="muted" role="status">
            Loading {name}…
          </p>
        )
      ) : (
        <>
          {skill.isError && (
            <ErrorNote
              error={skill.error}
              title={`${name} could not be loaded again.`}
              onRetry={() => void skill.refetch()}
              retrying={skill.isFetching}
            />
          )}
          {remove.isError && <ErrorNote error={remove.error} title={`${name} was not deleted.`} />}
          {open.isError && <ErrorNote error={open.error} title="The folder did not open." />}
          {parsed && !parsed.ok && !editing && (
            <p className="note note-error" role="status">
              Agents do not see this skill. {sentence(parsed.reason)} Edit SKILL.md to fix it.
            </p>
          )}
          {detail.content === null && !editing && (
            <p className="note note-error" role="status">
              This folder has no SKILL.md, so agents do not see it. Edit to write one.
            </p>
          )}
          {editing ? (
            <SkillEditor
              name={name}
              initial={detail.content ?? `---\nname: ${name}\ndescription: \n---\n`}
              version={detail.version}
              announce={announce}
              onDone={() => setEditing(false)}
            />
          ) : (
            parsed?.ok && (
              <>
                <SkillFacts skill={parsed.skill} />
                <article className="skills-body" aria-label="Instructions">
                  {parsed.body.trim() ? (
                    <SkillMarkdown text={parsed.body} />
                  ) : (
                    <p className="muted">No instructions yet: Edit to write them.</p>
                  )}
                </article>
              </>
            )
          )}
          <BundledFiles detail={detail} />
        </>
      )}
    </section>
  );
}

/** The optional frontmatter fields, when the skill has them. */
function SkillFacts({ skill }: { skill: SkillMetadata }) {
  const facts: Array<[string, string]> = [];
  if (skill.license) facts.push(['License', skill.license]);
  if (skill.compatibility) facts.push(['Needs', skill.compatibility]);
  if (skill.allowedTools) facts.push(['Allowed tools', skill.allowedTools]);
  facts.push(...Object.entries(skill.metadata ?? {}));
  if (!facts.length) return null;
  return (
    <dl className="skills-facts">
      {facts.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function BundledFiles({ detail }: { detail: SkillDetail }) {
  return (
    <section aria-labelledby="skill-files-heading" className="skills-files">
      <h3 id="skill-files-heading">Bundled files</h3>
      {detail.files.length ? (
        <ul>
          {detail.files.map((file) => (
            <li key={file}>
              <code>{file}</code>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">
          None. Scripts, references and assets go in scripts/, references/ and assets/ inside the folder; agents read them with the read
          tool.
        </p>
      )}
      {detail.unlistedFiles > 0 && <p className="muted small">And {detail.unlistedFiles} more files not listed here.</p>}
      <p className="hint">
        Folder: <code>{detail.dir}</code>
      </p>
    </section>
  );
}
