import { useQuery } from '@tanstack/react-query';
import { lazy, useEffect, useRef, useState } from 'react';
import { useChanges } from '../api/changes';
import { ApiError } from '../api/client';
import { placesQuery } from '../api/connections';
import { PlaceMcpSection } from '../features/connections/PlaceMcpSection';
import { SkillsSection } from '../features/skills/SkillsSection';
import { ErrorNote } from '../ui/ErrorNote';
import { closeOnEscape } from '../ui/keyboard';
import { Loading } from '../ui/Loading';
import { LoadedPart } from '../ui/LoadedPart';
import { useBrowserValue } from '../ui/useBrowserValue';
import { placeAtLoad, writePlace } from './remembered-place';
import { SECTIONS, sectionOf, type SectionId } from './sections';

// The screens the page does not open on come in chunks of their own, loaded when opened.
const AgentAccessSection = lazy(() =>
  import('../features/access/AgentAccessSection').then((module) => ({ default: module.AgentAccessSection })),
);
const ServerSection = lazy(() => import('../features/server/ServerSection').then((module) => ({ default: module.ServerSection })));

/** One window: the left rail (place picker, sections), the section on the right. */
export function App() {
  // The server says what changed; the screens' answers are fetched again as it does.
  useChanges();
  const places = useQuery(placesQuery);
  // The place shown last, which only this browser remembers: the host draws This machine, and the page
  // moves to the remembered one once it is live, as a choice in the picker would.
  const remembered = useBrowserValue(placeAtLoad, '');
  const [chosen, setRoot] = useState<string>();
  const root = chosen ?? remembered;
  const list = places.data?.places ?? [];
  const place = list.find((p) => p.root === root) ?? list[0];
  const section = useSection();
  // Below 640 px the sections fold into a menu; it closes when a section is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [section]);
  const closeMenu = () => {
    setMenuOpen(false);
    document.getElementById('menu-button')?.focus();
  };

  useEffect(() => {
    if (place) writePlace(place.root);
  }, [place]);

  // The picker of the host's HTML takes a choice before the page is live, which React does not hear:
  // as the page goes live, that choice is taken as if made now.
  const picker = useRef<HTMLSelectElement>(null);
  const shown = place?.root ?? '';
  useEffect(() => {
    // Against what the first render showed (this effect's own), once.
    const picked = picker.current?.value;
    if (picked !== undefined && picked !== shown) setRoot(picked);
  }, []);

  if (places.error instanceof ApiError && places.error.status === 401) return <SignedOut message={places.error.message} />;

  return (
    <div className="frame">
      {/* The hash names the section, so the link moves focus itself instead of changing it. */}
      <a
        className="skip-link"
        href="#main"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav
        className="rail"
        aria-label="Place and sections"
        data-menu={menuOpen ? 'open' : 'closed'}
        onKeyDown={menuOpen ? closeOnEscape(closeMenu) : undefined}
      >
        <div className="rail-top">
          <div className="brand">Persona Workspace</div>
          <button
            type="button"
            id="menu-button"
            className="button menu-button"
            aria-expanded={menuOpen}
            aria-controls="sections-menu"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
        </div>
        {/* The place picker belongs to Connections: the other screens are the machine's. */}
        {section === 'connections' && (
          <>
            <label className="field rail-place">
              <span className="field-label">Place</span>
              <select
                ref={picker}
                value={shown}
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
          </>
        )}
        <ul className="sections" id="sections-menu">
          {SECTIONS.map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`} aria-current={s.id === section ? 'page' : undefined} className="section-link">
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content" id="main" tabIndex={-1}>
        {section === 'skills' ? (
          <SkillsSection />
        ) : section === 'access' ? (
          <LoadedPart key="access">
            <AgentAccessSection places={list} />
          </LoadedPart>
        ) : section === 'server' ? (
          <LoadedPart key="server">
            <ServerSection />
          </LoadedPart>
        ) : places.isError ? (
          <ErrorNote error={places.error} title="The places could not be loaded." onRetry={() => void places.refetch()} />
        ) : place ? (
          <PlaceMcpSection key={place.root} place={place} />
        ) : (
          <Loading />
        )}
      </main>
    </div>
  );
}

/** Without the login cookie (a bookmarked or copied address): what this is and how to get in. */
function SignedOut({ message }: { message: string }) {
  return (
    <main className="signed-out" id="main">
      <h1>Signed out</h1>
      <p>{message}</p>
      <p className="muted">In the desktop app, open the window from the tray icon instead.</p>
    </main>
  );
}

/** The open section follows the address's hash, so Back, reload and links work; the host, which never sees the hash, draws Connections. */
function useSection(): SectionId {
  return useBrowserValue(() => sectionOf(window.location.hash), 'connections', onHashChange);
}

function onHashChange(changed: () => void): () => void {
  window.addEventListener('hashchange', changed);
  return () => window.removeEventListener('hashchange', changed);
}
