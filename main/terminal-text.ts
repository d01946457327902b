// What a terminal would act on rather than show: C0 controls but line feed and tab, DEL, C1 controls,
// and the bidirectional embeddings, overrides and isolates (which reorder what is shown).
const ACTED_ON = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text to print on a terminal: each character a terminal would act on is written as its escape
 * (`\x1b`, `\u202e`), so what is printed only ever shows itself, whatever it came from.
 */
export function forTerminal(text: string): string {
  return text.replace(ACTED_ON, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
