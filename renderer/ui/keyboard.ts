import type { KeyboardEvent } from 'react';

// Keyboard habits shared by the inline forms and confirmations: Escape closes them, and focus goes
// into a form when it opens (and, by each caller, onto the result or the button that opened it when it closes).

/** A keydown handler that calls `close` on Escape, for an inline form or confirmation. */
export function closeOnEscape(close: () => void) {
  return (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.defaultPrevented) return;
    event.preventDefault();
    event.stopPropagation();
    close();
  };
}

/** A ref callback that puts focus on the first field (or button) of what it is given, once, when it appears. */
export function focusFirstField(element: HTMLElement | null): void {
  element
    ?.querySelector<HTMLElement>(
      'input:not([type=hidden]):not(:disabled), select:not(:disabled), textarea:not(:disabled), button:not(:disabled)',
    )
    ?.focus();
}

/** The row next to `row` (the next, else the one before): where the keyboard goes when `row` goes. */
export function neighbourOf(row: HTMLElement | null): HTMLElement | null {
  return (row?.nextElementSibling ?? row?.previousElementSibling ?? null) as HTMLElement | null;
}

/** Focus on the row that took a removed one's place, or, when none is left, on the list's heading. */
export function focusNeighbour(neighbour: HTMLElement | null | undefined, headingId: string): void {
  if (neighbour?.isConnected) neighbour.focus();
  else document.getElementById(headingId)?.focus();
}
