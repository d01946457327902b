import type { Place } from '../../api/types';

export function AgentAccessSection(_props: { places: Place[] }) {
  return (
    <div className="section">
      <header className="section-header">
        <h1>Agent access</h1>
      </header>
    </div>
  );
}
