import type { WaitingAgentSignIn, PlaceRef, SignedInClientInfo } from '../../../common/api/agent-sign-ins.js';
import { placeFromRoot, placeRootOf, type Place } from '../../places/place-root.js';
import { normalizeCode, type AuthorizationServer, type SignedInClient } from './authorization-server.js';
import type { SignInRequest } from './oauth-state.js';

/**
 * The owner's side of agent sign-ins, shared by the page's API, the CLI and the desktop app: what
 * is waiting, and the answer. The place approved is the one the owner names, else the one the
 * client asked for, else This machine.
 */
export class Approvals {
  constructor(
    private readonly server: AuthorizationServer,
    private readonly workspaceRoot: string,
  ) {}

  async pending(): Promise<WaitingAgentSignIn[]> {
    return (await this.server.pending()).map((r) => this.view(r));
  }

  /** Approves the request shown with `code`, for `path` (a place or a path inside one) or the place asked. */
  async approve(code: string, by: string, path?: string): Promise<WaitingAgentSignIn & { approvedPlace: PlaceRef }> {
    const request = (await this.server.pending()).find((r) => r.code === normalizeCode(code));
    const place = placeRootOf(this.workspaceRoot, path ?? request?.askedPlace ?? '');
    const decided = await this.server.decide(code, 'approved', by, place.root);
    return { ...this.view(decided), approvedPlace: ref(place) };
  }

  async deny(code: string, by: string): Promise<WaitingAgentSignIn> {
    return this.view(await this.server.decide(code, 'denied', by));
  }

  async clients(): Promise<SignedInClientInfo[]> {
    return (await this.server.signedIn()).map(clientView);
  }

  async revoke(id: string): Promise<SignedInClientInfo> {
    return clientView(await this.server.revokeGrant(id));
  }

  private view(request: SignInRequest): WaitingAgentSignIn {
    const asked = request.askedPlace === undefined ? undefined : this.askedPlace(request.askedPlace);
    return {
      code: request.code,
      clientName: request.clientName,
      redirectUri: request.redirectUri,
      ...(asked && { askedPlace: asked }),
      ...(request.askedPlace !== undefined && !asked && { askedPath: request.askedPlace }),
      ...(request.from && { from: request.from }),
      createdAt: request.createdAt,
      expiresAt: request.expiresAt,
    };
  }

  private askedPlace(path: string): PlaceRef | undefined {
    try {
      return ref(placeRootOf(this.workspaceRoot, path));
    } catch {
      return undefined;
    }
  }
}

function ref(place: Place): PlaceRef {
  return { root: place.root, label: place.label };
}

function clientView(client: SignedInClient): SignedInClientInfo {
  return {
    id: client.id,
    clientId: client.clientId,
    name: client.name,
    ...(client.redirectUri && { redirectUri: client.redirectUri }),
    place: ref(placeFromRoot(client.place)),
    approvedAt: client.approvedAt,
    ...(client.lastUsedAt && { lastUsedAt: client.lastUsedAt }),
    ...(client.revokedAt && { revokedAt: client.revokedAt }),
    ...(client.revokedWhy && { revokedWhy: client.revokedWhy }),
  };
}
