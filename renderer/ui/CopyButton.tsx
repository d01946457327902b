import { useEffect, useRef, useState, type RefObject } from 'react';
import './copy-button.css';

type CopyState = 'idle' | 'copied' | 'refused';

/**
 * Copies `text` to the clipboard and says so where screen readers hear it. When the browser refuses
 * (no permission, not a secure page), it selects `target`'s text instead so the person can press Ctrl+C.
 */
export function CopyButton({
  text,
  label,
  target,
  className = 'button',
}: {
  text: string;
  label: string;
  target: RefObject<HTMLElement | null>;
  className?: string;
}) {
  const [state, setState] = useState<CopyState>('idle');
  const timer = useRef<number | undefined>(undefined);

  useEffect(() => () => window.clearTimeout(timer.current), []);
  // A different text (a token was just filled in) has not been copied yet.
  useEffect(() => setState('idle'), [text]);

  const copy = async () => {
    window.clearTimeout(timer.current);
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      setState('copied');
      timer.current = window.setTimeout(() => setState('idle'), 4000);
    } catch {
      selectContents(target.current);
      setState('refused');
    }
  };

  return (
    <span className="copy">
      <button type="button" className={className} onClick={() => void copy()} aria-label={`Copy ${label}`}>
        Copy
      </button>
      <span role="status" className={state === 'refused' ? 'copy-status copy-refused' : 'copy-status'}>
        {state === 'copied' && (
          <>
            Copied<span className="sr-only"> {label}</span>
          </>
        )}
        {state === 'refused' && 'The browser did not allow copying. The text is selected: press Ctrl+C (⌘C on a Mac).'}
      </span>
    </span>
  );
}

function selectContents(element: HTMLElement | null): void {
  if (!element) return;
  if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
    element.focus();
    element.select();
    return;
  }
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.selectAllChildren(element);
}

/** A short value in code type with its Copy button beside it. */
export function CopyLine({ text, label }: { text: string; label: string }) {
  const ref = useRef<HTMLElement>(null);
  return (
    <span className="copy-line">
      <code ref={ref}>{text}</code>
      <CopyButton text={text} label={label} target={ref} />
    </span>
  );
}
