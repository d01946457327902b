import type { PlacePolicy } from '../../common/api/places.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/** A place's policy as the API and the commands show it (a copy: the directory's is frozen). */
export function policyView(policy: SandboxPolicy): PlacePolicy {
  return {
    kind: policy.kind,
    folders: [...policy.folders],
    ...(policy.network && { network: [...policy.network] }),
    ...(policy.seal && { seal: [...policy.seal] }),
    ...(policy.unseal && { unseal: [...policy.unseal] }),
    ...(policy.limits && { limits: { ...policy.limits } }),
  };
}
