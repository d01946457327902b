const PLACE_KEY = 'persona.place';

/** The place the picker showed last ('' if none: This machine). */
export function readPlace(): string {
  try {
    return localStorage.getItem(PLACE_KEY) ?? '';
  } catch {
    return '';
  }
}

export function writePlace(root: string): void {
  try {
    localStorage.setItem(PLACE_KEY, root);
  } catch {
    // Storage off: the picker starts on This machine next time.
  }
}
