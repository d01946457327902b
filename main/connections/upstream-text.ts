/**
 * Text an upstream MCP server sends (its tools' names, titles and descriptions) made inert before any
 * surface shows it or passes it on: no terminal or model acts on it, and it has a bounded size.
 * Names and titles are single lines (MAX_NAME, MAX_TITLE), descriptions capped at MAX_DESCRIPTION.
 *
 * Removed: escape sequences whole (CSI, OSC, DCS, SOS, PM, APC, and the two-character ones, in their
 * 7-bit and C1 forms), so `\x1b[31m` leaves nothing behind; then every C0 and C1 control and DEL
 * that is left; the bidirectional embeddings, overrides and isolates, which reorder what is shown.
 * Lone surrogates become U+FFFD. Descriptions keep line breaks (CR LF, CR, NEL and the Unicode line and paragraph separators become LF)
 * and tabs.
 */

/** MCP's limit for a tool name (2025-11-25: 1 to 128 characters). */
export const MAX_NAME = 128;
/** A title is a display name: one line, as long as a name may be twice over. */
export const MAX_TITLE = 256;
/** About 8 KB: longer than any description a model needs, short enough that a listing of many stays small. */
export const MAX_DESCRIPTION = 8_000;

// A string sequence (OSC, DCS, SOS, PM, APC) runs to its terminator (BEL, ESC \ or ST); unterminated, only its opening is removed below.
const STRING_SEQUENCE = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)/g;
const CONTROL_SEQUENCE = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]/g;
const ESCAPE_SEQUENCE = /\x1b[\x20-\x2f]*[\x30-\x7e]/g;
const LONE_SURROGATE = /\p{Cs}/gu;
const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;
/** Controls a description drops (it keeps LF and tab; CR was turned into LF first). */
const CONTROL_BUT_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

function withoutSequences(text: string): string {
  return text
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(STRING_SEQUENCE, '')
    .replace(CONTROL_SEQUENCE, '')
    .replace(ESCAPE_SEQUENCE, '')
    .replace(BIDI, '');
}

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}

/** One line (a name, a title, a reason): line breaks and tabs become spaces, other controls go, at most `max` characters. */
export function inertLine(text: string, max: number): string {
  return cut(
    withoutSequences(text)
      .replace(/[\t\n\r\x85\u2028\u2029]+/g, ' ')
      .replace(CONTROL, '')
      .trim(),
    max,
  );
}

/** A description: lines and tabs kept, other controls gone, at most MAX_DESCRIPTION characters plus a note that it was cut. */
export function inertDescription(description: string): string {
  const clean = withoutSequences(description)
    .replace(/\r\n?|[\x85\u2028\u2029]/g, '\n')
    .replace(CONTROL_BUT_LINES, '');
  if (clean.length <= MAX_DESCRIPTION) return clean;
  return `${cut(clean, MAX_DESCRIPTION)}\n[Cut: the server's description is ${clean.length.toLocaleString('en')} characters long; the first ${MAX_DESCRIPTION.toLocaleString('en')} are shown.]`;
}
