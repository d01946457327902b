import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { placesQuery } from '../api/connections';
import { PlaceMcpSection } from '../features/connections/PlaceMcpSection';
import { ErrorNote } from '../ui/ErrorNote';

const PLACE_KEY = 'persona.place';

/** One window: the left rail (place picker, sections), the section on the right. */
export function App() {
  const places = useQuery(placesQuery);
  const [root, setRoot] = useState<string>(() => readPlace());
  const list = places.data?.places ?? [];
  const place = list.find((p) => p.root === root) ?? list[0];

  useEffect(() => {
    if (place) writePlace(place.root);
  }, [place]);

  return (
    <div className="frame">
      <nav className="rail" aria-label="Place and sections">
        <div className="brand">Persona Workspace</div>
        <label className="field rail-place">
          <span className="field-label">Place</span>
          <select
            value={place?.root ?? ''}
            onChange={(event) => setRoot(event.target.value)}
            disabled={!list.length}
            aria-describedby={places.data?.truncated ? 'places-truncated' : undefined}
          >
            {!list.length && <option value="">{places.isError ? 'Places unavailable' : 'Loading places…'}</option>}
            {list.map((p) => (
              <option key={p.root} value={p.root}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {places.data?.truncated && (
          <p id="places-truncated" className="hint">
            Some places may be missing: the workspace has too many folders to list them all.
          </p>
        )}
        <ul className="sections">
          <li>
            <a href="#connections" aria-current="page" className="section-link">
              Connections
            </a>
          </li>
        </ul>
      </nav>
      <main className="content" id="connections">
        {places.isError ? (
          <ErrorNote error={places.error} title="The places could not be loaded." onRetry={() => void places.refetch()} />
        ) : place ? (
          <PlaceMcpSection key={place.root} place={place} />
        ) : (
          <p className="muted" role="status">
            Loading…
          </p>
        )}
      </main>
    </div>
  );
}

function readPlace(): string {
  try {
    return localStorage.getItem(PLACE_KEY) ?? '';
  } catch {
    return '';
  }
}

function writePlace(root: string): void {
  try {
    localStorage.setItem(PLACE_KEY, root);
  } catch {
    // Storage off: the picker starts on This machine next time.
  }
}
