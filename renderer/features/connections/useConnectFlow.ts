import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { ApiError, openExternal } from '../../api/client';
import { connectConnection, connectConnections } from '../../api/connections';
import type { Connection, OwnApp } from '../../api/connections';
import { messageOf } from '../../ui/ErrorNote';

/** A sign-in to a connection that this page started in the browser, and waits for. */
export interface StartedUpstreamSignIn {
  name: string;
  displayName: string;
  url: string;
  /** Whether the page managed to open the sign-in page itself. */
  opened: boolean;
  /** When the page started waiting (Date.now()): only a list loaded after it can say how it ended. */
  startedAt: number;
}

export interface OwnAppRequest {
  name: string;
  displayName: string;
  redirectUrl: string;
  message: string;
}

/**
 * Connect, as one flow: an OAuth connection goes straight to the provider's sign-in (the page then
 * polls until it is done), the others connect now; a provider that needs the person's own OAuth
 * app opens the own-app panel instead.
 */
export function useConnectFlow(root: string, announce: (message: string) => void) {
  const client = useQueryClient();
  const [pending, setPending] = useState<StartedUpstreamSignIn[]>([]);
  const [ownApp, setOwnApp] = useState<OwnAppRequest | null>(null);

  const connect = useCallback(
    async (target: { name: string; displayName: string; expectSignIn: boolean }, app?: OwnApp): Promise<void> => {
      const popup = openBlank(target.expectSignIn);
      try {
        const result = await connectConnection(root, target.name, app);
        if ('authorizationUrl' in result) {
          const opened = showSignIn(popup, result.authorizationUrl);
          setOwnApp(null);
          setPending((list) => [
            ...list.filter((p) => p.name !== target.name),
            { name: target.name, displayName: target.displayName, url: result.authorizationUrl, opened, startedAt: Date.now() },
          ]);
          announce(`Finish signing in to ${target.displayName} in your browser. This page updates when you are done.`);
        } else {
          popup?.close();
          // Its row says Connected before the news does.
          await client.invalidateQueries({ queryKey: ['place-connections', root] });
          announce(
            `${target.displayName} is connected${result.tools.length ? `: ${result.tools.length} ${result.tools.length === 1 ? 'tool' : 'tools'}` : ''}.`,
          );
        }
      } catch (error) {
        popup?.close();
        if (error instanceof ApiError && error.code === 'own_app_required') {
          setOwnApp({
            name: target.name,
            displayName: target.displayName,
            redirectUrl: String(error.details.redirect_url ?? ''),
            message: error.message,
          });
          return;
        }
        throw error;
      } finally {
        await client.invalidateQueries({ queryKey: ['place-connections', root] });
      }
    },
    [root, client, announce],
  );

  /** A sign-in group's services: their sign-ins run one after another in one browser window, so the person signs in once. */
  const connectMany = useCallback(
    async (group: string, targets: Connection[]): Promise<void> => {
      const popup = openBlank(targets.some((t) => t.auth === 'oauth'));
      try {
        const result = await connectConnections(
          root,
          targets.map((t) => t.name),
        );
        if (result.authorizationUrl) {
          const opened = showSignIn(popup, result.authorizationUrl);
          const links = new Map(result.signIns.map((s) => [s.name, s.authorizationUrl]));
          const waiting = targets.filter((t) => links.has(t.name));
          // Each waits for its own sign-in, with its own link: opened alone, it goes on through the rest of the group.
          setPending((list) => [
            ...list.filter((p) => !links.has(p.name)),
            ...waiting.map((t) => ({ name: t.name, displayName: t.displayName, url: links.get(t.name)!, opened, startedAt: Date.now() })),
          ]);
          announce(
            `Finish signing in to ${group} in your browser: one sign-in connects ${waiting.length === 1 ? 'it' : `all ${waiting.length} services`}. This page updates when you are done.`,
          );
        } else {
          popup?.close();
          announce(`${targets.map((t) => t.displayName).join(', ')} ${targets.length === 1 ? 'is' : 'are'} connected.`);
        }
      } catch (error) {
        popup?.close();
        throw error;
      } finally {
        await client.invalidateQueries({ queryKey: ['place-connections', root] });
      }
    },
    [root, client, announce],
  );

  const settle = useCallback((names: Set<string>) => {
    setPending((list) => {
      const next = list.filter((p) => !names.has(p.name));
      return next.length === list.length ? list : next;
    });
  }, []);

  /** Loads the list again and resolves once it shows what the server has now (a connection just added). */
  const refresh = useCallback(() => client.invalidateQueries({ queryKey: ['place-connections', root] }), [client, root]);

  return {
    connect,
    connectMany,
    refresh,
    pending,
    settle,
    ownApp,
    setOwnApp,
    dismiss: (name: string) => setPending((list) => list.filter((p) => p.name !== name)),
  };
}

export type ConnectFlow = ReturnType<typeof useConnectFlow>;

/** The connections were added (they are in Connected now), but connecting them failed. */
export class AddedButNotConnected extends Error {
  override readonly name = 'AddedButNotConnected';
  /** When it was said: only a list loaded later can tell that its cause is gone. */
  readonly at = Date.now();

  constructor(
    message: string,
    readonly names: readonly string[],
  ) {
    super(message);
  }
}

/**
 * Clears a mutation's AddedButNotConnected error once its cause is gone: each connection it names
 * works now or was removed, as a list loaded after the error shows.
 */
export function useClearWhenFixed(root: string, mutation: { error: unknown; reset: () => void }, connections: readonly Connection[]): void {
  const client = useQueryClient();
  const { error, reset } = mutation;
  const loadedAt = client.getQueryState(['place-connections', root])?.dataUpdatedAt ?? 0;
  const fixed =
    error instanceof AddedButNotConnected &&
    loadedAt > error.at &&
    error.names.every((name) => (connections.find((c) => c.name === name)?.state ?? 'connected') === 'connected');
  useEffect(() => {
    if (fixed) reset();
  }, [fixed, reset]);
}

/**
 * Connects a connection just added: an OAuth one signs in; any other was checked by the add
 * itself. A failure says that it was added, that it does not work, and where to fix it.
 */
export async function connectAdded(flow: ConnectFlow, connection: Connection, expectSignIn: boolean): Promise<void> {
  if (!expectSignIn && connection.state !== 'sign-in') {
    // Its row is in Connected before anything is said of it.
    await flow.refresh();
    if (connection.state === 'connected') return;
    throw new AddedButNotConnected(
      `${connection.displayName} is in Connected, but it does not work: ${connection.reason ?? connection.state} Fix it there, retry, or remove it.`,
      [connection.name],
    );
  }
  try {
    await flow.connect({ name: connection.name, displayName: connection.displayName, expectSignIn });
  } catch (error) {
    throw new AddedButNotConnected(`${connection.displayName} was added to Connected, but it could not connect: ${messageOf(error)}`, [
      connection.name,
    ]);
  }
}

// Opened while the click is still a user gesture, so no popup blocker stops the sign-in page.
function openBlank(expectSignIn: boolean): Window | null {
  return expectSignIn && !window.personaDesktop ? window.open('about:blank', '_blank') : null;
}

/** Shows the sign-in page: in the tab opened on the click, in the desktop's browser, or a new tab; says whether it opened. */
function showSignIn(popup: Window | null, url: string): boolean {
  if (popup) {
    popup.opener = null;
    popup.location.href = url;
    return true;
  }
  if (window.personaDesktop) {
    openExternal(url);
    return true;
  }
  // Blocked without a click to open it from: the note in Connected links to it.
  return window.open(url, '_blank', 'noopener,noreferrer') !== null;
}
