import {
  waitingAgentSignInsAnswer,
  signedInClientsAnswer,
  type WaitingAgentSignIn,
  type SignedInClientInfo,
} from '../common/api/agent-sign-ins.js';
import type { Command } from './cli-args.js';
import { Approvals } from './auth/agent-oauth/approvals.js';
import { loadConfig } from './config.js';
import { LOCAL_PERSON } from './places/user-id.js';
import { openSecretStore } from './secrets/open-secret-store.js';
import { AuthorizationServer } from './auth/agent-oauth/authorization-server.js';
import { agentTokenStore } from './auth/app-token-store.js';
import { runningServer } from './server-client.js';
import { forTerminal } from './terminal-text.js';
import { PRODUCT_NAME } from './version.js';

type SignInCommand = Extract<Command, { kind: 'approve-list' | 'approve' | 'deny' | 'clients-list' | 'clients-revoke' }>;

/**
 * approve, deny, clients: the owner answers agent sign-ins from the terminal (headless machines).
 * They act on the state files directly, as the server does, so a running server sees the answer at once.
 */
export async function signInCommand(
  command: SignInCommand,
  env: NodeJS.ProcessEnv,
  write: (text: string) => void = (t) => process.stdout.write(t),
): Promise<number> {
  const config = loadConfig({}, env);
  const { stateDir } = config;
  // Reading: what the running server has, when one runs.
  const running = command.kind === 'approve-list' || command.kind === 'clients-list' ? await runningServer(stateDir) : undefined;
  if (running && command.kind === 'approve-list')
    return listPending((await running.call('GET', '/agent-access/sign-ins', waitingAgentSignInsAnswer)).requests, command.json, write);
  if (running && command.kind === 'clients-list')
    return listClients((await running.call('GET', '/agent-access/clients', signedInClientsAnswer)).clients, command.json, write);
  // Answers and revocations sign nothing: the secret store (and its keychain probe) is opened only if a key is asked for.
  const server = new AuthorizationServer({
    stateDir,
    signingKey: async () => agentTokenStore(stateDir, await openSecretStore({ stateDir, env })).signingKey(),
  });
  const approvals = new Approvals(server, config.workspaceRoot);
  switch (command.kind) {
    case 'approve-list':
      return listPending(await approvals.pending(), command.json, write);
    case 'approve': {
      const approved = await approvals.approve(command.code, LOCAL_PERSON, command.workspacePath);
      write(
        `Approved ${approved.clientName} (${approved.code}) to work on this machine in ${approved.approvedPlace.label}. Its browser goes back to it now.\n`,
      );
      return 0;
    }
    case 'deny': {
      const denied = await approvals.deny(command.code, LOCAL_PERSON);
      write(`Refused ${denied.clientName} (${denied.code}).\n`);
      return 0;
    }
    case 'clients-list':
      return listClients(await approvals.clients(), command.json, write);
    case 'clients-revoke': {
      const revoked = await approvals.revoke(command.id);
      write(`Revoked ${revoked.name} (${revoked.id}). A running server ends its sessions and refuses it from now on.\n`);
      return 0;
    }
  }
}

function listPending(pending: WaitingAgentSignIn[], json: boolean, write: (text: string) => void): number {
  if (json) write(`${JSON.stringify(pending, null, 2)}\n`);
  else if (pending.length === 0) write('No agent sign-ins are waiting.\n');
  else {
    for (const r of pending) {
      const place =
        r.askedPlace?.label ?? (r.askedPath ? `${r.askedPath} (not a place here)` : 'no place named (This machine unless you pick one)');
      // Two clients of one name differ in where they asked from and when: both are shown, as on the page.
      const from = r.from ? `  from ${r.from}` : '';
      write(
        forTerminal(
          `${r.code}  ${r.clientName}  place: ${place}  answer goes to ${r.redirectUri}  asked ${r.createdAt}${from}  expires ${r.expiresAt}`,
        ) + '\n',
      );
    }
    write(`Approve one with: ${PRODUCT_NAME} approve CODE [--workspace-path PATH]; refuse with: ${PRODUCT_NAME} deny CODE\n`);
  }
  return 0;
}

function listClients(clients: SignedInClientInfo[], json: boolean, write: (text: string) => void): number {
  if (json) write(`${JSON.stringify(clients, null, 2)}\n`);
  else if (clients.length === 0) write('No client has signed in yet.\n');
  else {
    for (const c of clients) {
      const state = c.revokedAt
        ? `revoked ${c.revokedAt}${c.revokedWhy ? ` (${c.revokedWhy})` : ''}`
        : `last used ${c.lastUsedAt ?? 'never'}`;
      // The name, client id and redirect URI are the client's own words: printed inert.
      write(
        forTerminal(
          `${c.id}  ${c.name}  client ${c.clientId}  answers to ${c.redirectUri ?? 'unknown'}  place: ${c.place.label}  approved ${c.approvedAt}  ${state}`,
        ) + '\n',
      );
    }
  }
  return 0;
}
