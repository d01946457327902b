import './app/no-eval';
import { focusManager } from '@tanstack/react-query';
import { startTransition } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { startFirstScreen } from './app/first-screen';
import { Page, pageClient } from './app/Page';

// The page, mounted or made live over the host's HTML (main.tsx loads it).

// Back to the window (a sign-in finished in the browser, another tab changed something): look again.
// React Query listens for visibilitychange only; switching windows fires just blur and focus.
focusManager.setEventListener((handleFocus) => {
  const onVisibility = () => handleFocus(document.visibilityState === 'visible');
  const onFocus = () => handleFocus(true);
  const onBlur = () => handleFocus(false);
  window.addEventListener('visibilitychange', onVisibility, false);
  window.addEventListener('focus', onFocus, false);
  window.addEventListener('blur', onBlur, false);
  return () => {
    window.removeEventListener('visibilitychange', onVisibility);
    window.removeEventListener('focus', onFocus);
    window.removeEventListener('blur', onBlur);
  };
});

const client = pageClient();
const carried = startFirstScreen(client);
const container = document.getElementById('root')!;

if (carried && container.firstElementChild) {
  // The host drew the first screen from the same data (renderer/server-render.tsx), and it is painted
  // (main.tsx): this only makes it live. As a transition, React does it in slices, between which the
  // page takes input (a click on a part not yet live makes that part live first).
  startTransition(() => {
    hydrateRoot(container, <Page client={client} />);
  });
} else {
  const root = createRoot(container);
  // Drawn while this script runs rather than in a task after it, which the browser's own work after a
  // script (storing its compiled code, a collection) would otherwise delay.
  flushSync(() => root.render(<Page client={client} />));
}
