import { createParser } from 'eventsource-parser';
import { useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect } from 'react';
import { change, CHANGE_EVENT, type Change } from '../../common/api/events.js';
import { resolveTarget } from './client';

/** Waits before following the stream again after it dropped: doubling from the first, up to the last. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * Follows the server's change events (`GET /api/events`) while the page is open and fetches again
 * just the answers each change touches; no answer is asked for on a timer. Each time the stream
 * opens (at load, and back after a drop), what the page shows is fetched once: it may have changed
 * before the stream could say so.
 */
export function useChanges(): void {
  const client = useQueryClient();
  useEffect(() => {
    const stop = new AbortController();
    void follow(client, stop.signal);
    return () => stop.abort();
  }, [client]);
}

/** The queries a change touches, by the start of their keys (renderer/api/*). */
export function keysOf(c: Change): QueryKey[] {
  switch (c.topic) {
    case 'connections':
      return c.root === undefined
        ? [['place-connections'], ['connection-details'], ['tool-search']]
        : [
            ['place-connections', c.root],
            ['connection-details', c.root],
            ['tool-search', c.root],
          ];
    case 'secrets':
      return c.root === undefined
        ? [['secrets'], ['place-connections']]
        : [
            ['secrets', c.root],
            ['place-connections', c.root],
          ];
    case 'places':
      return [['places'], ['place-connections'], ['tool-search']];
    case 'catalog':
      return [['catalog']];
    case 'skills':
      return [['skills']];
    case 'sign-ins':
      return [['agent-sign-ins']];
    case 'clients':
      return [['agent-clients']];
    case 'tokens':
      return [['tokens'], ['tool-search']];
    case 'server':
      return [['server']];
    case 'activity':
      return [['activity']];
  }
}

async function follow(client: QueryClient, signal: AbortSignal): Promise<void> {
  let wait = RETRY_FIRST_MS;
  while (!signal.aborted) {
    try {
      const { base, headers } = await resolveTarget();
      const response = await fetch(`${base}/api/events`, {
        headers: { ...headers, Accept: 'text/event-stream' },
        credentials: 'same-origin',
        cache: 'no-store',
        signal,
      });
      // Signed out: the page says so on its next answer; nothing to follow until it signs in again.
      if (response.status === 401) return;
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      // What was fetched before the stream opened (at load, or before a drop) may have changed since.
      void client.invalidateQueries();
      wait = RETRY_FIRST_MS;
      await read(response.body, (c) => {
        // A change this page does not know (a newer server): anything may be stale.
        if (!c) void client.invalidateQueries();
        else for (const queryKey of keysOf(c)) void client.invalidateQueries({ queryKey });
      });
    } catch {
      // Dropped or refused: tried again below.
    }
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
}

async function read(body: ReadableStream<Uint8Array>, apply: (c: Change | undefined) => void): Promise<void> {
  const parser = createParser({
    onEvent: (event) => {
      if (event.event !== CHANGE_EVENT) return;
      const parsed = change.safeParse(parseJson(event.data));
      apply(parsed.success ? parsed.data : undefined);
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
