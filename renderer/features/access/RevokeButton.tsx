import { useRef, useState, type ReactNode } from 'react';
import type { UseMutationResult } from '@tanstack/react-query';
import { ConfirmInline } from '../../ui/ConfirmInline';

/** Revoke, confirmed inline; No puts focus back on the button. */
export function RevokeButton({
  name,
  question,
  revoke,
}: {
  name: string;
  question: ReactNode;
  revoke: UseMutationResult<unknown, Error, void>;
}) {
  const [confirming, setConfirming] = useState(false);
  const revokeRef = useRef<HTMLButtonElement>(null);
  return confirming ? (
    <ConfirmInline
      label={`Revoke ${name}?`}
      question={question}
      yes="Yes, revoke"
      working="Revoking…"
      pending={revoke.isPending}
      onYes={() => revoke.mutate()}
      onNo={() => {
        setConfirming(false);
        revoke.reset();
        requestAnimationFrame(() => revokeRef.current?.focus());
      }}
    />
  ) : (
    <button type="button" className="button" ref={revokeRef} onClick={() => setConfirming(true)} aria-label={`Revoke ${name}`}>
      Revoke
    </button>
  );
}
