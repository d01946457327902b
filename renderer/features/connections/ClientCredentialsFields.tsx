import {
  type ClientCredentialsInput,
  type ClientCredentialsView,
  credentialsMethodWords,
  DEFAULT_JWT_ALGORITHM,
  JWT_ALGORITHMS,
  type JwtAlgorithm,
} from '../../../common/api/client-credentials.js';

/** What the owner filled in for a machine login; the secret or key is never shown back, so it starts empty. */
export interface CredentialsChoice {
  on: boolean;
  clientId: string;
  method: ClientCredentialsView['method'];
  secret: string;
  privateKey: string;
  algorithm: JwtAlgorithm;
}

export function credentialsChoiceOf(kept: ClientCredentialsView | undefined): CredentialsChoice {
  return {
    on: kept !== undefined,
    clientId: kept?.clientId ?? '',
    method: kept?.method ?? 'client_secret',
    secret: '',
    privateKey: '',
    algorithm: DEFAULT_JWT_ALGORITHM,
  };
}

/**
 * The change to send for `choice`, against what the connection keeps: undefined when nothing
 * changes, null to sign in in the browser again. Throws, with what to do, when a part is missing.
 */
export function credentialsEdit(
  choice: CredentialsChoice,
  kept: ClientCredentialsView | undefined,
): ClientCredentialsInput | null | undefined {
  if (!choice.on) return kept ? null : undefined;
  const clientId = choice.clientId.trim();
  const proof = choice.method === 'client_secret' ? choice.secret : choice.privateKey.trim();
  if (!proof && kept && clientId === kept.clientId && choice.method === kept.method) return undefined;
  if (!clientId) throw new Error('Client credentials need the client ID the provider gave you.');
  if (!proof)
    throw new Error(
      choice.method === 'client_secret'
        ? 'Paste the client secret too: it is kept in the keychain and never shown again.'
        : 'Paste the private key too: it is kept in the keychain and never shown again.',
    );
  return choice.method === 'client_secret'
    ? { client_id: clientId, client_secret: proof }
    : { client_id: clientId, private_key: proof, signing_algorithm: choice.algorithm };
}

/** A machine login (the OAuth client-credentials grant): the client ID, and its secret or private key. */
export function ClientCredentialsFields({
  value,
  onChange,
  kept,
}: {
  value: CredentialsChoice;
  onChange: (next: CredentialsChoice) => void;
  kept: ClientCredentialsView | undefined;
}) {
  const set = (part: Partial<CredentialsChoice>) => onChange({ ...value, ...part });
  return (
    <fieldset className="fieldset">
      <legend>Machine login (client credentials)</legend>
      <label className="field-check">
        <input type="checkbox" checked={value.on} onChange={(e) => set({ on: e.target.checked })} />
        <span>Log in with client credentials the provider gave you, with no browser</span>
      </label>
      {value.on && (
        <>
          {kept && (
            <p className="muted small">
              Set: {kept.clientId}, {credentialsMethodWords[kept.method]}. Paste the secret or key again only to change them.
            </p>
          )}
          <div className="field-row">
            <label className="field">
              <span className="field-label">Machine client ID</span>
              <input
                value={value.clientId}
                onChange={(e) => set({ clientId: e.target.value })}
                maxLength={500}
                autoComplete="off"
                spellCheck={false}
              />
            </label>
            <label className="field">
              <span className="field-label">Proves itself</span>
              <select value={value.method} onChange={(e) => set({ method: e.target.value as CredentialsChoice['method'] })}>
                <option value="client_secret">{credentialsMethodWords.client_secret}</option>
                <option value="private_key_jwt">{credentialsMethodWords.private_key_jwt}</option>
              </select>
            </label>
          </div>
          {value.method === 'client_secret' ? (
            <label className="field">
              <span className="field-label">Machine client secret</span>
              <input
                type="password"
                value={value.secret}
                onChange={(e) => set({ secret: e.target.value })}
                maxLength={2000}
                autoComplete="off"
              />
            </label>
          ) : (
            <div className="field-row">
              <label className="field">
                <span className="field-label">Private key (PKCS #8 PEM)</span>
                <textarea
                  value={value.privateKey}
                  onChange={(e) => set({ privateKey: e.target.value })}
                  rows={4}
                  maxLength={20_000}
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="-----BEGIN PRIVATE KEY-----"
                />
              </label>
              <label className="field">
                <span className="field-label">Signing algorithm</span>
                <select value={value.algorithm} onChange={(e) => set({ algorithm: e.target.value as JwtAlgorithm })}>
                  {JWT_ALGORITHMS.map((a) => (
                    <option key={a}>{a}</option>
                  ))}
                </select>
              </label>
            </div>
          )}
        </>
      )}
    </fieldset>
  );
}
