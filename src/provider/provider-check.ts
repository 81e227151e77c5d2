// `fleetkit provider check`: proves the token and the API URL work before anything is provisioned
// (two reads: locations and server types), so a first live run fails on its first step, not mid-way.
import { HetznerClient, type HetznerClientOptions } from './hetzner.js'
import { DEFAULT_TOKEN_ENV } from './api-token.js'
import { DEFAULT_HETZNER_API_URL } from './hetzner-transport.js'

export interface ProviderCheckResult {
  /** The API root that answered. */
  apiUrl: string
  /** The environment variable the token was read from (never the token). */
  tokenEnv: string
  /** Location names, as `--region` takes them. */
  locations: string[]
  /** Server types with their architecture, as `--type` takes them. */
  serverTypes: { name: string; architecture: 'x86' | 'arm'; cores: number; memoryGb: number; diskGb: number }[]
}

export async function checkProvider(options: HetznerClientOptions): Promise<ProviderCheckResult> {
  const client = new HetznerClient(options)
  const locations = await client.listLocations()
  const types = await client.listServerTypes()
  return {
    apiUrl: options.baseUrl ?? DEFAULT_HETZNER_API_URL,
    tokenEnv: options.tokenEnv ?? DEFAULT_TOKEN_ENV,
    locations: locations.map((l) => l.name).sort(),
    serverTypes: types
      .filter((t) => !t.deprecated)
      .map((t) => ({ name: t.name, architecture: t.architecture, cores: t.cores, memoryGb: t.memory, diskGb: t.disk }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  }
}
