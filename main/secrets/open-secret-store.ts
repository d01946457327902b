import { EncryptedFileSecretStore } from './encrypted-file-store.js';
import { KeychainSecretStore } from './keychain-store.js';
import { SecretStoreError, type SecretStore } from './secret-store.js';

/** The environment variables of the secret store, for the README and --help. */
export const SECRET_STORE_ENVIRONMENT = {
  WORKSPACE_SECRET_STORE: 'Where logins and secrets are kept: keychain (the OS keychain, default) or file (an encrypted file in the state dir).',
  WORKSPACE_SECRET_KEY: 'With WORKSPACE_SECRET_STORE=file: the 32-byte key in base64 or hex (default: <state dir>/secrets.key, created on first use).',
  WORKSPACE_KEYCHAIN_SERVICE: 'The keychain service name, to keep two installations on one machine apart (default persona-mcp-workspace).',
} as const;

export interface OpenSecretStoreOptions {
  stateDir: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The store WORKSPACE_SECRET_STORE selects. The keychain is never swapped for the file when it is
 * missing: that would quietly move logins to a weaker place, so its operations fail instead.
 */
export function openSecretStore({ stateDir, env = process.env }: OpenSecretStoreOptions): SecretStore {
  const kind = env.WORKSPACE_SECRET_STORE || 'keychain';
  const key = env.WORKSPACE_SECRET_KEY || undefined;
  switch (kind) {
    case 'keychain':
      if (key !== undefined) {
        throw new SecretStoreError(
          'WORKSPACE_SECRET_KEY is set but secrets are kept in the OS keychain. Set WORKSPACE_SECRET_STORE=file to use the encrypted file, or unset WORKSPACE_SECRET_KEY.',
        );
      }
      return new KeychainSecretStore(env.WORKSPACE_KEYCHAIN_SERVICE ? { service: env.WORKSPACE_KEYCHAIN_SERVICE } : {});
    case 'file':
      return new EncryptedFileSecretStore({ stateDir, key });
    default:
      throw new SecretStoreError(`WORKSPACE_SECRET_STORE=${kind} is not a secret store. Use keychain (the default) or file.`);
  }
}
