// What `node provision` and `node replace` hand the lifecycle besides their own inputs: the provider
// client on the state's shared rate budget, the host policy, and the real clock, rng and sleep.
import type { StatePool } from '../store/transaction.js'

import { type Clock, systemClock } from '../config/clock.js'
import { type Rng, systemRng } from '../config/rng.js'
import { type HostPolicy, loadHostPolicy } from '../definition/host-policy.js'
import type { Definition } from '../definition/types.js'
import type { Provider } from '../provider/provider.js'
import { providerClient } from '../provider/provider-client.js'

export interface ProvisionRuntime {
  client: Provider
  policy: HostPolicy
  clock: Clock
  rng: Rng
  sleep: (ms: number) => Promise<void>
}

export function provisionRuntime(
  pool: StatePool,
  definition: Definition,
  apiUrl: string | undefined,
): ProvisionRuntime {
  return {
    client: providerClient(pool, definition, { env: process.env, ...(apiUrl ? { apiUrl } : {}) }),
    policy: loadHostPolicy(),
    clock: systemClock,
    rng: systemRng,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  }
}
