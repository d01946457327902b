export function SkillsSection() {
  return (
    <div className="section">
      <header className="section-header">
        <h1>Skills</h1>
      </header>
    </div>
  );
}
