import { useEffect, useRef } from 'react';
import type { CreatedToken } from '../../api/access';
import { CopyButton } from '../../ui/CopyButton';

/** The one time a token is shown: copy it now, it is never shown again. */
export function NewToken({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const tokenRef = useRef<HTMLElement>(null);
  // Keyboard and screen-reader users land on the news, right before the Copy button.
  useEffect(() => headingRef.current?.focus(), [token.id]);

  return (
    <section className="panel new-token" aria-labelledby="new-token-heading">
      <h3 id="new-token-heading" tabIndex={-1} ref={headingRef}>
        Token “{token.name}” created
      </h3>
      <p className="new-token-warning">
        <strong>Copy it now: you will not see it again.</strong> Anyone who has it can use this machine until it expires or you revoke it.
      </p>
      <code className="secret-token" ref={tokenRef}>
        {token.token}
      </code>
      <div className="form-actions">
        <CopyButton text={token.token} label="the token" target={tokenRef} className="button primary" />
        <button type="button" className="button" onClick={onDone}>
          Done
        </button>
      </div>
      <p className="hint">Every configuration below includes this token until you press Done.</p>
    </section>
  );
}
