import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { ApiError, openExternal } from '../../api/client';
import { connectConnection } from '../../api/connections';
import type { Connection, OwnApp } from '../../api/types';
import { messageOf } from '../../ui/ErrorNote';

export interface PendingSignIn {
  name: string;
  displayName: string;
  url: string;
  /** Whether the page managed to open the sign-in page itself. */
  opened: boolean;
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
  const [pending, setPending] = useState<PendingSignIn[]>([]);
  const [ownApp, setOwnApp] = useState<OwnAppRequest | null>(null);

  const connect = useCallback(
    async (target: { name: string; displayName: string; expectSignIn: boolean }, app?: OwnApp): Promise<void> => {
      // Opened while the click is still a user gesture, so no popup blocker stops the sign-in page.
      const popup = target.expectSignIn && !window.personaDesktop ? window.open('about:blank', '_blank') : null;
      try {
        const result = await connectConnection(root, target.name, app);
        if ('authorizationUrl' in result) {
          let opened = true;
          if (popup) {
            popup.opener = null;
            popup.location.href = result.authorizationUrl;
          } else if (window.personaDesktop) {
            openExternal(result.authorizationUrl);
          } else {
            // Blocked without a click to open it from: the note below links to it.
            opened = window.open(result.authorizationUrl, '_blank', 'noopener,noreferrer') !== null;
          }
          setOwnApp(null);
          setPending((list) => [...list.filter((p) => p.name !== target.name), { name: target.name, displayName: target.displayName, url: result.authorizationUrl, opened }]);
          announce(`Finish signing in to ${target.displayName} in your browser. This page updates when you are done.`);
        } else {
          popup?.close();
          announce(`${target.displayName} is connected${result.tools.length ? `: ${result.tools.length} ${result.tools.length === 1 ? 'tool' : 'tools'}` : ''}.`);
        }
      } catch (error) {
        popup?.close();
        if (error instanceof ApiError && error.code === 'own_app_required') {
          setOwnApp({ name: target.name, displayName: target.displayName, redirectUrl: String(error.details.redirect_url ?? ''), message: error.message });
          return;
        }
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

  return { connect, pending, settle, ownApp, setOwnApp, dismiss: (name: string) => setPending((list) => list.filter((p) => p.name !== name)) };
}

export type ConnectFlow = ReturnType<typeof useConnectFlow>;

/** The connection was added (it is in Connected now), but connecting it failed. */
export class AddedButNotConnected extends Error {
  override readonly name = 'AddedButNotConnected';
}

/** Connects a connection just added; a failure says that it was added and where to finish. */
export async function connectAdded(flow: ConnectFlow, connection: Connection, expectSignIn: boolean): Promise<void> {
  try {
    await flow.connect({ name: connection.name, displayName: connection.displayName, expectSignIn });
  } catch (error) {
    throw new AddedButNotConnected(`${connection.displayName} was added to Connected, but it could not connect: ${messageOf(error)}`);
  }
}
