import { createHash } from 'node:crypto';
import { ConnectionInputError } from './errors.js';

const CATALOG_ID = /^[a-z0-9-]{1,32}$/;
const STORE_ID = /^[0-9a-f]{64}$/;
// Any case: an uppercase look-alike is refused too, never looked up elsewhere.
const PERSONAL_SHAPED = /^u[0-9a-f]{8}__/i;
const SERVER_NAME_PARTS = /^(u[0-9a-f]{8})__([a-z0-9-]{1,32})$/;
const CATALOG_ID_MAX = 32;
const TOOL_NAME_CHAR = /[^A-Za-z0-9_-]/gu;
const TOOL_NAME_CHAR_TEST = /[^A-Za-z0-9_-]/u;
const MAX_TOOL_NAME = 64;
const TAG_HEX = 6;
// What every changed part ends with; a catalog id or tool name that ends like this is changed too.
const TAGGED = new RegExp(`-[0-9a-f]{${TAG_HEX}}$`);
// Words (camelCase humps, runs of letters or digits) and what lies between them.
const WORD_PIECES = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|[^A-Za-z0-9]+/g;
// A shortened word keeps at least this many letters.
const MIN_WORD = 3;
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
  if (!isUserId(userId))
    throw new ConnectionInputError(
      `${JSON.stringify(userId)} is not a user id: it must be non-empty, without control characters or lone surrogates.`,
    );
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
 * The store id of a person's connections in a place, as the place connections spec
 * (place-mcp-connections.md) has it: sha256 of the whole `place:<user id>:<root>`.
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
    throw new ConnectionInputError(`${JSON.stringify(catalogId)} is not a valid catalog id: use 1 to 32 lowercase letters, digits or "-".`);
  }
  return `u${storeId.slice(0, 8)}__${catalogId}`;
}

/** Anything shaped like a connection's server name, whoever's it is. */
export function isPersonalShapedName(name: string): boolean {
  return PERSONAL_SHAPED.test(name);
}

/**
 * A catalog-shaped id for a server that is not listed, from the name the person gave it (`GitHub`
 * → `github`, `Jira (Acme)` → `jira-acme`), so that its tools read as that name. `taken` holds the
 * ids it must not be: the catalog's (the page matches connections to catalog entries by id) and
 * the person's other connections in the place; the first free of `github`, `github-2`, ... is it.
 * A name with no letters or digits gives `server`.
 */
export function unlistedCatalogId(name: string, taken: ReadonlySet<string>): string {
  const slug =
    name
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'server';
  for (let n = 1; ; n += 1) {
    const suffix = n === 1 ? '' : `-${n}`;
    const id = `${cutAtWord(slug, CATALOG_ID_MAX - suffix.length)}${suffix}`;
    if (!taken.has(id)) return id;
  }
}

/** `slug` in at most `max` characters, cut between words where one ends in its second half. */
function cutAtWord(slug: string, max: number): string {
  if (slug.length <= max) return slug;
  const cut = slug.slice(0, max);
  if (slug[max] === '-') return cut;
  const end = cut.lastIndexOf('-');
  return (end >= max / 2 ? cut.slice(0, end) : cut).replace(/-+$/, '');
}

/**
 * The names an agent sees for a connection's upstream tools, in the order given: each
 * `<server>__<tool>` where that is a valid MCP tool name (`[A-Za-z0-9_-]`, at most 64 characters).
 * The connection's part gives way first: where the whole join is too long, the catalog id is cut
 * and tagged (`github-enterprise-cloud` → `github-ent-1a2b3c`) as far as that tool needs, down to
 * one character and the tag. Only a tool name that does not fit even then, or has characters a
 * tool name cannot have, is changed itself: its words are shortened
 * (`get_pull_request_review_comments_for_the_latest_commit` → `get_pul_req_rev_com_for_the_lat_com`),
 * and then cut, plus `-` and 6 hex of a hash of the upstream name.
 *
 * Deterministic and collision-free: the connection part holds no `_`, so a name splits back into
 * the store's `u<hash>`, the connection part and the tool part. A catalog id is kept whole only
 * when it does not end like a tag, and a tool name only when it is valid, fits and does not end
 * like a tag, so a changed part never meets a kept one; the tools of one connection whose names are
 * changed get distinct stems (the part before the tag), also distinct from the kept names of the
 * others. Only two catalog ids of one person in one place whose 24-bit tags are the same, each cut
 * to the same start, could meet; the gateway looks names up in its own table, never parses them.
 */
export function gatewayToolNames(serverName: string, upstreamNames: readonly string[]): string[] {
  const parts = SERVER_NAME_PARTS.exec(serverName);
  if (!parts) throw new ConnectionInputError(`${JSON.stringify(serverName)} is not a connection's server name (u<8 hex>__<catalog id>).`);
  const [, store, catalogId] = parts as unknown as [string, string, string];
  const prefix = `${store}__`;
  // What the connection part and the tool part share, beside the prefix and the `__` between them.
  const room = MAX_TOOL_NAME - prefix.length - 2;
  const shortest = connectionPart(catalogId, 1);
  // A short catalog id kept whole may be shorter than the shortest tagged one.
  const least = Math.min(shortest.length, TAGGED.test(catalogId) ? Infinity : catalogId.length);
  const names: string[] = new Array<string>(upstreamNames.length);
  const kept = new Set<string>();
  const changed: number[] = [];
  upstreamNames.forEach((tool, i) => {
    if (isKeptToolName(tool) && tool.length <= room - least) {
      names[i] = `${prefix}${connectionPart(catalogId, room - tool.length)}__${tool}`;
      kept.add(tool);
    } else {
      changed.push(i);
    }
  });
  const stemRoom = room - shortest.length - 1 - TAG_HEX;
  const stems = new Set(kept);
  // By upstream name (UTF-16 order), so that a stem does not depend on the order the server lists its tools in.
  changed.sort((a, b) => compareCodeUnits(upstreamNames[a]!, upstreamNames[b]!));
  for (const i of changed) {
    const tool = upstreamNames[i]!;
    const stem = freeStem(tool.replace(TOOL_NAME_CHAR, '_'), stemRoom, stems);
    stems.add(stem);
    names[i] = `${prefix}${shortest}__${stem}-${tagOf(tool)}`;
  }
  return names;
}

/** One tool's name, as `gatewayToolNames` gives it among its connection's tools. */
export function gatewayToolName(serverName: string, upstreamToolName: string): string {
  return gatewayToolNames(serverName, [upstreamToolName])[0]!;
}

/** The catalog id, whole when it fits in `room` and does not end like a tag, else cut to fit and tagged. */
function connectionPart(catalogId: string, room: number): string {
  if (catalogId.length <= room && !TAGGED.test(catalogId)) return catalogId;
  const start = catalogId.slice(0, Math.max(1, room - TAG_HEX - 1)).replace(/-+$/, '');
  return `${start}-${tagOf(catalogId)}`;
}

function isKeptToolName(tool: string): boolean {
  return tool.length > 0 && !TOOL_NAME_CHAR_TEST.test(tool) && !TAGGED.test(tool);
}

/** The first of the tool's readable forms within `room` that no other tool of the connection has. */
function freeStem(tool: string, room: number, taken: ReadonlySet<string>): string {
  const short = shortenWords(tool, room);
  if (!taken.has(short)) return short;
  for (let n = 2; ; n += 1) {
    const suffix = `_${n}`;
    const numbered = `${shortenWords(tool, room - suffix.length)}${suffix}`;
    if (!taken.has(numbered)) return numbered;
  }
}

/**
 * The tool's name within `room` characters, keeping every word's start: the longest word loses its
 * last letter, again and again (down to 3 letters; of equal ones the last), and only then is the
 * whole cut. `get_pull_request_review_comments` in 24 → `get_pull_reque_revi_comm`.
 */
function shortenWords(tool: string, room: number): string {
  if (tool.length <= room) return tool;
  const pieces = tool.match(WORD_PIECES) ?? [tool];
  let length = tool.length;
  while (length > room) {
    let longest = -1;
    pieces.forEach((piece, i) => {
      if (/[A-Za-z0-9]/.test(piece) && piece.length > MIN_WORD && (longest < 0 || piece.length >= pieces[longest]!.length)) longest = i;
    });
    if (longest < 0) break;
    pieces[longest] = pieces[longest]!.slice(0, -1);
    length -= 1;
  }
  return pieces
    .join('')
    .slice(0, room)
    .replace(/[_-]+$/, '');
}

function tagOf(text: string): string {
  // UTF-16 code units, so that even lone surrogates (which UTF-8 would turn into U+FFFD) stay distinct.
  return createHash('sha256').update(text, 'utf16le').digest('hex').slice(0, TAG_HEX);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
