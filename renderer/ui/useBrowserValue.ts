import { useSyncExternalStore } from 'react';

const unchanging = () => () => {};

/**
 * A value only the browser knows (what it remembers, its clock and time zone, its window): while
 * React takes over the host's HTML of the first screen, `onHost`, what the host drew; the browser's
 * own at once after, and from the start when the page draws itself. `subscribe` tells of changes.
 */
export function useBrowserValue<T>(read: () => T, onHost: T, subscribe: (changed: () => void) => () => void = unchanging): T {
  return useSyncExternalStore(subscribe, read, () => onHost);
}
