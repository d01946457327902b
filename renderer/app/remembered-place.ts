const PLACE_KEY = 'persona.place';

/** The place the picker showed last ('' if none: This machine). */
function readPlace(): string {
  try {
    return localStorage.getItem(PLACE_KEY) ?? '';
  } catch {
    return '';
  }
}

let atLoad: string | undefined;

/** The place the picker showed last as this page loaded: what this or another tab writes later does not move it. */
export function placeAtLoad(): string {
  atLoad ??= readPlace();
  return atLoad;
}

export function writePlace(root: string): void {
  try {
    localStorage.setItem(PLACE_KEY, root);
  } catch {
    // Storage off: the picker starts on This machine next time.
  }
}
