import { useRef, useState, type KeyboardEvent } from 'react';
import { CopyButton } from '../../ui/CopyButton';
import { clientConfigs, TOKEN_PLACEHOLDER, toolSearchNote, type ClientId, type ToolSearchFacts } from './client-configs';

/** Copy-ready configuration per MCP client, one tab each (arrow keys move between tabs, as in any tab list). */
export function ClientConfigs({
  url,
  authRequired,
  token,
  toolSearch,
}: {
  url: string;
  authRequired: boolean;
  token: string | undefined;
  toolSearch: ToolSearchFacts | undefined;
}) {
  const configs = clientConfigs({ url, authRequired, ...(token !== undefined && { token }) });
  const [active, setActive] = useState<ClientId>('claude-code');
  const tabs = useRef(new Map<ClientId, HTMLButtonElement>());
  const textRef = useRef<HTMLElement>(null);
  const current = configs.find((c) => c.id === active) ?? configs[0]!;

  const onKeyDown = (event: KeyboardEvent) => {
    const index = configs.findIndex((c) => c.id === active);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: configs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const id = configs[(next + configs.length) % configs.length]!.id;
    setActive(id);
    tabs.current.get(id)?.focus();
  };

  return (
    <div className="client-configs">
      <div role="tablist" aria-label="MCP client" className="tabs" onKeyDown={onKeyDown}>
        {configs.map((c) => (
          <button
            key={c.id}
            type="button"
            role="tab"
            id={`client-tab-${c.id}`}
            aria-selected={c.id === active}
            aria-controls={`client-panel-${c.id}`}
            tabIndex={c.id === active ? 0 : -1}
            className="tab"
            ref={(element) => {
              if (element) tabs.current.set(c.id, element);
              else tabs.current.delete(c.id);
            }}
            onClick={() => setActive(c.id)}
          >
            {c.name}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`client-panel-${current.id}`} aria-labelledby={`client-tab-${current.id}`} className="tab-panel">
        <p className="muted">{current.where}</p>
        <pre className="snippet">
          <code ref={textRef}>{current.text}</code>
        </pre>
        {toolSearch && <p className="hint tool-search-note">{toolSearchNote(current.id, toolSearch)}</p>}
        <CopyButton text={current.text} label={`the ${current.name} configuration`} target={textRef} />
        {authRequired && !token && current.text.includes(TOKEN_PLACEHOLDER) && (
          <p className="hint">
            Create a token above and it is filled in here. Or put a token you have in place of <code>{TOKEN_PLACEHOLDER}</code>.
          </p>
        )}
      </div>
    </div>
  );
}
