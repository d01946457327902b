import { useState } from 'react';
import { useAnnouncement } from '../../ui/useAnnouncement';
import { CreateSkillForm } from './CreateSkillForm';
import { SkillList } from './SkillList';
import { SkillView } from './SkillView';
import './skills.css';

/** What the section shows; `focus` says where the keyboard lands when the list comes back. */
type View = { kind: 'list'; focus?: { skill: string } | 'heading' } | { kind: 'skill'; name: string } | { kind: 'create' };

/**
 * The machine's skills: the list with search (invalid folders flagged with the reason), one skill
 * (SKILL.md rendered, its files, edit, delete, open its folder), and a new skill from a template.
 */
export function SkillsScreen() {
  const [view, setView] = useState<View>({ kind: 'list' });
  // The latest outcome stays a while, then the page is quiet again.
  const [message, announce] = useAnnouncement();

  return (
    <>
      <div className="live" role="status" aria-live="polite">
        {message}
      </div>

      {view.kind === 'list' ? (
        <SkillList focus={view.focus} onOpen={(name) => setView({ kind: 'skill', name })} onCreate={() => setView({ kind: 'create' })} />
      ) : view.kind === 'create' ? (
        <CreateSkillForm
          announce={announce}
          onCreated={(name) => setView({ kind: 'skill', name })}
          onCancel={() => setView({ kind: 'list', focus: 'heading' })}
        />
      ) : (
        <SkillView
          key={view.name}
          name={view.name}
          announce={announce}
          onBack={() => setView({ kind: 'list', focus: { skill: view.name } })}
          onDeleted={() => setView({ kind: 'list', focus: 'heading' })}
        />
      )}
    </>
  );
}
