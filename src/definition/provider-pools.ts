// Which pools have a provider: fleetkit provisions their nodes (`fleetkit node provision`), so a node
// there gets its SSH address from the server fleetkit made, recorded in the state, and its `ssh.host`
// in fleet.yaml is optional. A pool has one when the definition declares `providers.hetzner` and the
// pool names the `image` its servers boot from; every other pool's nodes are hosts fleetkit did not
// make, reached at their declared `ssh.host`.
import type { Definition } from './types.js'

export function poolHasProvider(definition: Pick<Definition, 'providers' | 'pools'>, pool: string): boolean {
  return definition.providers?.hetzner !== undefined && definition.pools[pool]?.image !== undefined
}
