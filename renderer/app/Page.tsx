import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
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
  return (
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>
  );
}
