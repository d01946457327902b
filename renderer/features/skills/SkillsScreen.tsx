import { useEffect, useState } from 'react';
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
  const [view, setView] = useState<View>(() => {
    const name = skillInAddress();
    return name ? { kind: 'skill', name } : { kind: 'list' };
  });
  useViewInAddress(view, setView);
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

/** The open skill is in the address (#skills/<name>), so reload, links and Back work. */
function useViewInAddress(view: View, setView: (update: (current: View) => View) => void): void {
  useEffect(() => {
    const onHash = () => {
      const name = skillInAddress();
      setView((current) =>
        name
          ? current.kind === 'skill' && current.name === name
            ? current
            : { kind: 'skill', name }
          : current.kind === 'skill'
            ? { kind: 'list', focus: { skill: current.name } }
            : current,
      );
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [setView]);
  const address = view.kind === 'skill' ? `#skills/${encodeURIComponent(view.name)}` : '#skills';
  useEffect(() => {
    if (window.location.hash !== address) window.location.hash = address;
  }, [address]);
}

function skillInAddress(): string | undefined {
  const match = /^#skills\/(.+)$/.exec(window.location.hash);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}
