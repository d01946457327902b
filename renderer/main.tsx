import { focusManager, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { startFirstScreen } from './app/first-screen';
import './styles.css';

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

const client = new QueryClient({
  defaultOptions: {
    queries: { retry: 1, staleTime: 5_000 },
    mutations: { retry: 0 },
  },
});

startFirstScreen(client);

const root = createRoot(document.getElementById('root')!);
// Drawn while this script runs rather than in a task after it, which the browser's own work after a
// script (storing its compiled code, a collection) would otherwise delay.
flushSync(() =>
  root.render(
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  ),
);
