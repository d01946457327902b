/** A connector's initial on a colour picked from its name: no external icons (the CSP allows none). */
export function Initial({ name }: { name: string }) {
  const letter = [...name.trim()][0]?.toUpperCase() ?? '?';
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return (
    <span className="initial" data-hue={hash % 8} aria-hidden="true">
      {letter}
    </span>
  );
}
