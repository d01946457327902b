export function ServerSection() {
  return (
    <div className="section">
      <header className="section-header">
        <h1>Server</h1>
      </header>
    </div>
  );
}
