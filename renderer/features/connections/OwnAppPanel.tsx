import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { messageOf } from '../../ui/ErrorNote';
import type { ConnectFlow, OwnAppRequest } from './useConnectFlow';

/** For a provider that lets no app register itself: the person's own OAuth app, then the sign-in. */
export function OwnAppPanel({ request, flow }: { request: OwnAppRequest; flow: ConnectFlow }) {
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [copied, setCopied] = useState(false);
  const submit = useMutation({
    mutationFn: () =>
      flow.connect(
        { name: request.name, displayName: request.displayName, expectSignIn: true },
        { client_id: clientId.trim(), ...(clientSecret && { client_secret: clientSecret }) },
      ),
  });
  const ids = `own-app-${request.name}`;
  return (
    <form
      className="panel"
      aria-labelledby={`${ids}-title`}
      onSubmit={(event) => {
        event.preventDefault();
        if (clientId.trim()) submit.mutate();
      }}
    >
      <h3 id={`${ids}-title`}>Use your own OAuth app for {request.displayName}</h3>
      <p className="muted">{request.message}</p>
      <ol className="steps">
        <li>
          At the provider, create an OAuth app with this redirect URL:
          <div className="copy-line">
            <code id={`${ids}-redirect`}>{request.redirectUrl}</code>
            <button
              type="button"
              className="button quiet"
              aria-describedby={`${ids}-redirect`}
              onClick={() => {
                void navigator.clipboard?.writeText(request.redirectUrl).then(
                  () => setCopied(true),
                  () => setCopied(false),
                );
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
        </li>
        <li>Paste its client ID, and its client secret if it has one, then sign in.</li>
      </ol>
      <label className="field">
        <span className="field-label">Client ID</span>
        <input value={clientId} onChange={(e) => setClientId(e.target.value)} required autoComplete="off" autoFocus />
      </label>
      <label className="field">
        <span className="field-label">
          Client secret <span className="muted">(optional)</span>
        </span>
        <input type="password" value={clientSecret} onChange={(e) => setClientSecret(e.target.value)} autoComplete="off" />
      </label>
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={submit.isPending || !clientId.trim()}>
          {submit.isPending ? 'Opening the sign-in…' : 'Sign in'}
        </button>
        <button type="button" className="button" onClick={() => flow.setOwnApp(null)}>
          Cancel
        </button>
      </div>
      {submit.isError && (
        <p className="field-error" role="alert">
          {messageOf(submit.error)}
        </p>
      )}
    </form>
  );
}
