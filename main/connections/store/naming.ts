import { createHash } from 'node:crypto';
import { ConnectionInputError } from './errors.js';

const CATALOG_ID = /^[a-z0-9-]{1,32}$/;
const STORE_ID = /^[0-9a-f]{64}$/;
const SERVER_NAME = /^u[0-9a-f]{8}__[a-z0-9-]{1,32}$/;
// Any case: an uppercase look-alike is refused too, never looked up elsewhere.
const PERSONAL_SHAPED = /^u[0-9a-f]{8}__/i;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_NAME_CHAR = /[^A-Za-z0-9_-]/gu;
const MAX_TOOL_NAME = 64;
const TAG_HEX = 8;
// What every hashed gateway name ends with; a plain join ending like this is hashed too.
const HASHED_TAIL = new RegExp(`-[0-9a-f]{${TAG_HEX}}$`);
// Control characters, and lone surrogates (which UTF-8 hashing would merge into one U+FFFD).
const UNPRINTABLE = /[\u0000-\u001f\u007f]|\p{Cs}/u;

/** A catalog id (or one derived from an unlisted server's host): `[a-z0-9-]`, 1 to 32 characters. */
export function isCatalogId(id: string): boolean {
  return CATALOG_ID.test(id);
}

/** A person: the JWT subject, or `local`. Opaque here, only kept printable. */
export function isUserId(userId: string): boolean {
  return userId.length > 0 && !UNPRINTABLE.test(userId);
}

/**
 * A place root relative to the workspace root (`""` is "This machine"). Opaque here, but in one
 * spelling only: `Crew//a` or `Crew/a/` would otherwise be a second store for the same place.
 */
export function isPlaceRoot(root: string): boolean {
  if (root === '') return true;
  if (UNPRINTABLE.test(root) || root.includes('\\')) return false;
  return root.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

export function assertUserId(userId: string): void {
  if (!isUserId(userId)) throw new ConnectionInputError(`${JSON.stringify(userId)} is not a user id: it must be non-empty, without control characters or lone surrogates.`);
}

export function assertPlaceRoot(root: string): void {
  if (!isPlaceRoot(root)) {
    throw new ConnectionInputError(
      `${JSON.stringify(root)} is not a place root: use a path relative to the workspace root with "/" between ` +
        'folders (no leading or trailing "/", no empty, "." or ".." parts, no backslashes or control characters), or "" for "This machine".',
    );
  }
}

/**
 * The spec's store id of a person's connections in a place: sha256 of the whole `place:<user id>:<root>`.
 * Hashing the whole string (never a sanitized form) keeps every (person, place) apart.
 */
export function storeIdOf(userId: string, root: string): string {
  assertUserId(userId);
  assertPlaceRoot(root);
  return sha256Hex(`place:${userId}:${root}`);
}

/** `u<first 8 hex of the store id>__<catalog id>`: two people's Gmail in one place get distinct names. */
export function serverNameOf(storeId: string, catalogId: string): string {
  if (!STORE_ID.test(storeId)) throw new ConnectionInputError(`${JSON.stringify(storeId)} is not a store id (64 lowercase hex digits).`);
  if (!isCatalogId(catalogId)) {
    throw new ConnectionInputError(
      `${JSON.stringify(catalogId)} is not a valid catalog id: use 1 to 32 lowercase letters, digits or "-".`,
    );
  }
  return `u${storeId.slice(0, 8)}__${catalogId}`;
}

/** Anything shaped like a connection's server name, whoever's it is. */
export function isPersonalShapedName(name: string): boolean {
  return PERSONAL_SHAPED.test(name);
}

/**
 * The name an agent sees for an upstream tool: `<server>__<tool>` when that is a valid MCP tool
 * name (`[A-Za-z0-9_-]`, at most 64 characters), else that join with invalid characters turned to
 * `_`, cut to fit, plus `-` and 8 hex of a hash of the exact original names.
 *
 * Distinct inputs give distinct names: plain joins never end in `-<8 hex>` (those are hashed too),
 * so they never meet a hashed name; a plain join splits back uniquely because a server name holds
 * `__` only after its `u<hash>` part; the kept prefix (55 characters) always holds the whole server
 * name, so hashed names of different servers differ; only two tools of one server whose hashes share
 * 32 bits could meet, which no name this short can rule out. Not reversible: the gateway keeps a map.
 */
export function gatewayToolName(serverName: string, upstreamToolName: string): string {
  if (!SERVER_NAME.test(serverName)) {
    throw new ConnectionInputError(`${JSON.stringify(serverName)} is not a connection's server name (u<8 hex>__<catalog id>).`);
  }
  const plain = `${serverName}__${upstreamToolName}`;
  if (TOOL_NAME.test(plain) && !HASHED_TAIL.test(plain)) return plain;
  // UTF-16 code units, so that even lone surrogates (which UTF-8 would turn into U+FFFD) stay distinct.
  const tag = createHash('sha256').update(`${serverName}\0${upstreamToolName}`, 'utf16le').digest('hex').slice(0, TAG_HEX);
  const readable = plain.replace(TOOL_NAME_CHAR, '_').slice(0, MAX_TOOL_NAME - TAG_HEX - 1);
  return `${readable}-${tag}`;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
