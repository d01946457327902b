import { useSyncExternalStore } from 'react';

/** The width below which the rail folds into a menu (styles.css): a phone, or a window made that narrow. */
const NARROW = '(max-width: 639.98px)';

/** Whether the window is phone-narrow now; follows the window as it is resized. */
export function useNarrowScreen(): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia(NARROW);
      query.addEventListener('change', changed);
      return () => query.removeEventListener('change', changed);
    },
    () => window.matchMedia(NARROW).matches,
    // The host draws the first screen wide; a narrow window folds it once the page is live.
    () => false,
  );
}
