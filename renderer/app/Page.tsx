import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, useEffect } from 'react';
import { App } from './App';

/** The page's query cache, the same in the browser and in the host's render of the first screen. */
export function pageClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: 1, staleTime: 5_000 },
      mutations: { retry: 0 },
    },
  });
}

/** The whole page over its query cache: what the browser mounts and what the host renders to HTML. */
export function Page({ client }: { client: QueryClient }) {
  // Said once React has taken the page over (hydrated the host's HTML, or drawn it) and the first
  // effects ran, a choice made before included: from then on a click or a key is heard. The page's
  // tests wait for it (e2e/page/page-support.ts); before it, what shows may be the host's HTML only.
  useEffect(() => {
    document.documentElement.dataset.live = '';
  }, []);
  return (
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>
  );
}
