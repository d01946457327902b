import type { Change } from '../../common/api/events.js';

export type { Change };

/**
 * What changed on this server, as it happens: every surface that shows a state (the page through
 * /api/events, the tray in process) hears it here and fetches that state again, instead of asking
 * on a timer. A listener that throws does not stop the others.
 */
export class ChangeFeed {
  private readonly listeners = new Set<(change: Change) => void>();

  publish(change: Change): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** A key that is equal for changes that mean the same: a burst of them is told once. */
export function changeKey(change: Change): string {
  return 'root' in change && change.root !== undefined ? `${change.topic}:${change.root}` : change.topic;
}
