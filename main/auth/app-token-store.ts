import type { SecretStore } from '../secrets/secret-store.js';
import { SecretStoreSigningKeySource } from '../secrets/signing-key-source.js';
import { AgentTokenStore } from './agent-tokens.js';

/** The app's own agent tokens, signed with a key kept in the secret store (the server and the CLI's commands). */
export function agentTokenStore(stateDir: string, secrets: SecretStore): AgentTokenStore {
  return new AgentTokenStore({ stateDir, keySource: new SecretStoreSigningKeySource(secrets, stateDir) });
}
