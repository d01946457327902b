import { lazy } from 'react';
import { LoadedPart } from '../../ui/LoadedPart';

// The screen comes in its own chunk: its Markdown renderer and YAML parser load only when Skills opens.
const SkillsScreen = lazy(() => import('./SkillsScreen').then((module) => ({ default: module.SkillsScreen })));

export function SkillsSection() {
  return (
    <div className="section">
      <header className="section-header">
        <h1>Skills</h1>
        <p className="muted">Instructions agents on this machine load with the skill tool when a task needs them.</p>
      </header>
      <LoadedPart
        fallback={
          <p className="muted" role="status">
            Loading skills…
          </p>
        }
      >
        <SkillsScreen />
      </LoadedPart>
    </div>
  );
}
