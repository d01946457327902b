import type { AddConnectionInput } from '../../../main/connections/store/connection-store.js';

/** Linear added to Crew alpha by `local`: the connection the store's tests add, with any field changed. */
export function linear(overrides: Partial<Extract<AddConnectionInput, { url: string }>> = {}): AddConnectionInput {
  return {
    owner: 'local',
    root: 'Crew/alpha',
    catalogId: 'linear',
    displayName: 'Linear',
    url: 'https://mcp.linear.app/mcp',
    transport: 'streamable-http',
    auth: { kind: 'oauth' },
    ...overrides,
  };
}
