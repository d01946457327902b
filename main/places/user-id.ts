/** Whoever runs the app: the page's admin token and the CLI act as this person. */
export const LOCAL_PERSON = 'local';

const MAX_LENGTH = 200;
// Controls, invisible format characters, lone surrogates and line breaks: an id or a name must read as what it is.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** Whether `text` holds a character that does not show as itself: a control, bidi or other invisible format character, a lone surrogate, a line break. */
export function hasUnprintable(text: string): boolean {
  return UNPRINTABLE.test(text);
}

/** What is wrong with `text` as a user id or a person's name, if anything. */
export function printableProblem(text: string): string | undefined {
  const length = [...text].length;
  if (length < 1 || length > MAX_LENGTH) return `must be 1 to ${MAX_LENGTH} characters`;
  if (hasUnprintable(text)) return 'must be printable characters only';
  if (text.trim() === '') return 'must not be only spaces';
  return undefined;
}

/**
 * A user id is a JWT `sub` or `local`, compared exactly (never trimmed): 1 to 200 printable
 * characters, not only spaces. `__proto__` is refused: it cannot be a key of the stored records.
 */
export function userIdProblem(id: string): string | undefined {
  return id === '__proto__' ? 'is reserved' : printableProblem(id);
}
