// What the API says of a place's sandbox beyond its kind (what is sealed from its agents, the limits
// in effect on this machine): defined with the rest of a place's policy in places.ts.

export type { CredentialStoreState, LimitInEffect, LimitName, LimitsInEffect } from './places.js';
