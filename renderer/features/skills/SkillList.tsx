import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { skillsQuery } from '../../api/skills';
import { ErrorNote } from '../../ui/ErrorNote';
import { Initial } from '../../ui/Initial';
import { sentence } from './sentence';

interface Props {
  /** Where the keyboard lands once the list is there: a skill's row, or the list's heading. */
  focus?: { skill: string } | 'heading' | undefined;
  onOpen: (name: string) => void;
  onCreate: () => void;
}

/** Installed skills with search, then the folders agents do not see, each with the reason. */
export function SkillList({ focus, onOpen, onCreate }: Props) {
  const listing = useQuery(skillsQuery);
  const [search, setSearch] = useState('');
  const headingRef = useRef<HTMLHeadingElement>(null);
  const rowsRef = useRef<HTMLDivElement>(null);
  const loaded = listing.data !== undefined;

  useEffect(() => {
    if (!loaded || !focus) return;
    if (focus === 'heading') headingRef.current?.focus();
    else rowsRef.current?.querySelector<HTMLButtonElement>(`[data-skill="${CSS.escape(focus.skill)}"]`)?.focus();
  }, [loaded, focus]);

  const words = search.trim().toLowerCase();
  const matches = (...texts: string[]) => !words || texts.some((t) => t.toLowerCase().includes(words));
  const skills = (listing.data?.skills ?? []).filter((s) => matches(s.name, s.description));
  const invalid = (listing.data?.invalid ?? []).filter((s) => matches(s.folder, s.reason));
  const nothingInstalled = listing.data && !listing.data.skills.length && !listing.data.invalid.length;

  return (
    <div ref={rowsRef}>
      <div className="search">
        <label htmlFor="skill-search" className="sr-only">
          Search skills
        </label>
        <input
          id="skill-search"
          type="search"
          placeholder="Search skills"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          autoComplete="off"
          aria-controls="skill-results"
          disabled={!listing.data?.skills.length && !listing.data?.invalid.length}
        />
        <button type="button" className="button primary" onClick={onCreate}>
          New skill
        </button>
      </div>

      <div id="skill-results">
        <section aria-labelledby="skills-heading" className="group">
          <h2 id="skills-heading" tabIndex={-1} ref={headingRef}>
            Installed
          </h2>
          {listing.isPending ? (
            <p className="muted" role="status">
              Loading skills…
            </p>
          ) : listing.isError ? (
            <ErrorNote
              error={listing.error}
              title="The skills could not be loaded."
              onRetry={() => void listing.refetch()}
              retrying={listing.isFetching}
            />
          ) : nothingInstalled ? (
            <div className="empty">
              <span>No skills yet. Create one from a template, or put a skill folder in {listing.data.dir}.</span>
              <button type="button" className="button" onClick={onCreate}>
                New skill
              </button>
            </div>
          ) : !skills.length ? (
            <p className="empty">
              {words
                ? `No skill matches “${search.trim()}”. Try another word.`
                : 'No skill loads: fix the folders below so agents can use them.'}
            </p>
          ) : (
            <ul className="rows">
              {skills.map((s) => (
                <SkillRow key={s.name} folder={s.name} detail={s.description} action="View" onOpen={onOpen} />
              ))}
            </ul>
          )}
        </section>

        {invalid.length > 0 && (
          <section aria-labelledby="invalid-skills-heading" className="group">
            <h2 id="invalid-skills-heading">Not loaded</h2>
            <p className="hint skills-hint">Agents do not see these folders until their SKILL.md follows the rules. Open one to fix it.</p>
            <ul className="rows">
              {invalid.map((s) => (
                <SkillRow
                  key={s.folder}
                  folder={s.folder}
                  badge={<span className="state state-needs-secret">Invalid</span>}
                  detail={<span className="reason">{sentence(s.reason)}</span>}
                  action="Fix"
                  onOpen={onOpen}
                />
              ))}
            </ul>
          </section>
        )}
      </div>

      {listing.data && !nothingInstalled && (
        <p className="hint">
          Skills live in <code>{listing.data.dir}</code>: one folder each, with its SKILL.md. Folders added there by hand show up here too.
        </p>
      )}
    </div>
  );
}

/** One skill folder in a list: its name, a line about it, and the button that opens it. */
function SkillRow(props: { folder: string; badge?: ReactNode; detail: ReactNode; action: 'View' | 'Fix'; onOpen: (name: string) => void }) {
  const { folder } = props;
  return (
    <li className="row-wrap">
      <div className="row">
        <Initial name={folder} />
        {/* A click on the name (or its line) opens the skill too; the keyboard has the button. */}
        <div className="row-main row-opens" onClick={() => props.onOpen(folder)}>
          <div className="row-title">
            <span className="name">{folder}</span>
            {props.badge}
          </div>
          <div className="row-detail">{props.detail}</div>
        </div>
        <div className="row-actions">
          <button
            type="button"
            className="button"
            data-skill={folder}
            aria-label={`${props.action} ${folder}`}
            onClick={() => props.onOpen(folder)}
          >
            {props.action}
          </button>
        </div>
      </div>
    </li>
  );
}
