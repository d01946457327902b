import { TokenInputError, UnknownTokenError } from './auth/agent-tokens.js';
import { SigningKeyError } from './auth/signing-key.js';
import { SignInRequestError, UnknownClientError } from './auth/agent-oauth/errors.js';
import { NotJsonError } from './http/not-json-error.js';
import { TokenStoreError } from './auth/token-file.js';
import { UpstreamUnavailableError } from './connections/gateway/upstream-unavailable-error.js';
import { ConnectionCheckError } from './connections/place-connections.js';
import { ConnectionRequestError, PlaceAccessError } from './connections/place-rules.js';
import { NetworkPolicyError } from './network/network-policy-error.js';
import {
  OwnAppRequiredError,
  SignInDeniedError,
  SignInFailedError,
  SignInRequiredError,
  SignInStateError,
  SignInUnsupportedError,
  TokenRefreshError,
} from './connections/upstream-oauth/errors.js';
import { ToolSearchModeError } from '../common/tool-search-mode.js';
import { ServerUrlError } from './connections/server-url.js';
import { LocalCommandError } from './connections/local/local-command.js';
import { ClientConfigError } from './connections/client-configs/client-config-errors.js';
import { ConnectionExistsError, ConnectionInputError, ConnectionNotFoundError, ConnectionStoreError } from './connections/store/errors.js';
import { FileLockTimeoutError } from './state/file-lock.js';
import { AccessInputError, UnknownPersonError } from './places/access-directory.js';
import { PlacePathError } from './places/place-root.js';
import { SkillConflictError, SkillExistsError, SkillInputError, SkillNotFoundError } from './machine/skill-errors.js';
import { InvalidPlaceSecretError, UnknownPlaceSecretError } from './secrets/place-secrets.js';
import { SecretStoreError, SecretStoreUnavailableError } from './secrets/secret-store.js';
import { StateFileError } from './state/versioned-json-file.js';
import { ServerRefusalError } from './server-client.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** Errors whose message is written for the person or agent who caused them, with the HTTP status that fits. */
const USER_ERRORS: Array<[ErrorClass, number]> = [
  [PlacePathError, 400],
  [AccessInputError, 400],
  [ConnectionInputError, 400],
  [InvalidPlaceSecretError, 400],
  [ServerUrlError, 400],
  [LocalCommandError, 400],
  [ClientConfigError, 409],
  [NetworkPolicyError, 400],
  [TokenInputError, 400],
  [SkillInputError, 400],
  [ToolSearchModeError, 400],
  [PlaceAccessError, 403],
  [UnknownPersonError, 404],
  [ConnectionNotFoundError, 404],
  [UnknownPlaceSecretError, 404],
  [UnknownTokenError, 404],
  [UnknownClientError, 404],
  [NotJsonError, 415],
  [SkillNotFoundError, 404],
  [ConnectionExistsError, 409],
  [SkillExistsError, 409],
  [SkillConflictError, 409],
  [SignInStateError, 400],
  [SignInDeniedError, 400],
  [OwnAppRequiredError, 409],
  [SignInRequiredError, 409],
  [UpstreamUnavailableError, 502],
  [ConnectionCheckError, 502],
  [SignInUnsupportedError, 502],
  [SignInFailedError, 502],
  [TokenRefreshError, 503],
  [SecretStoreUnavailableError, 503],
  [FileLockTimeoutError, 503],
  // The server's own state is at fault; the message says which file and what to do.
  [SecretStoreError, 500],
  [ConnectionStoreError, 500],
  [StateFileError, 500],
  [TokenStoreError, 500],
  [SigningKeyError, 500],
];

/** The status and message to show for an error meant for users, or undefined for a bug. */
export function userError(error: unknown): { status: number; message: string } | undefined {
  if (error instanceof ConnectionRequestError || error instanceof SignInRequestError || error instanceof ServerRefusalError)
    return { status: error.status, message: error.message };
  const match = USER_ERRORS.find(([type]) => error instanceof type);
  return match ? { status: match[1], message: (error as Error).message } : undefined;
}
