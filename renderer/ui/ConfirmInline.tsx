import { useEffect, useRef, type ReactNode } from 'react';
import { closeOnEscape } from './keyboard';

/**
 * An inline Yes/No in place of a destructive button (no popup). Focus starts on No, the safe
 * choice, and Escape is No; `onNo` should put focus back on the button that asked.
 */
export function ConfirmInline(props: {
  label: string;
  question: ReactNode;
  yes: string;
  working: string;
  pending: boolean;
  onYes: () => void;
  onNo: () => void;
}) {
  const keepRef = useRef<HTMLButtonElement>(null);
  useEffect(() => keepRef.current?.focus(), []);
  return (
    <div className="confirm" role="group" aria-label={props.label} onKeyDown={closeOnEscape(props.onNo)}>
      <span>{props.question}</span>
      <button type="button" className="button danger" onClick={props.onYes} disabled={props.pending}>
        {props.pending ? props.working : props.yes}
      </button>
      <button type="button" className="button" ref={keepRef} onClick={props.onNo}>
        No
      </button>
    </div>
  );
}
