// `fleetkit provider check`: proves the token and the API URL work before anything is provisioned
// (two reads: locations and server types), so a first live run fails on its first step, not mid-way.
// It takes from the project's budget shared through the state, and reports what is left of it.
import type { StatePool } from '../store/transaction.js'

import type { Clock } from '../config/clock.js'
import { shownOnTerminal } from '../protocol/terminal-text.js'
import { readRateLimit } from '../store/provider/provider-rate-limits.js'
import { type ApiToken, DEFAULT_TOKEN_ENV } from './api-token.js'
import { HetznerClient } from './hetzner.js'
import { DEFAULT_HETZNER_API_URL } from './hetzner-transport.js'
import { sharedRateBudget } from './shared-rate-budget.js'

export interface ProviderCheckResult {
  /** The API root that answered. */
  apiUrl: string
  /** The environment variable the token was read from (never the token). */
  tokenEnv: string
  /** Location names, as `--region` takes them. */
  locations: string[]
  /** Server types with their architecture, as `--type` takes them. */
  serverTypes: { name: string; architecture: 'x86' | 'arm'; cores: number; memoryGb: number; diskGb: number }[]
  /** The project's request budget after the check, as the API last reported it to any fleetkit process. */
  budget: {
    /** Requests an hour. */
    limit: number
    /** Requests left (whole). */
    remaining: number
  }
}

export interface ProviderCheckOptions {
  token: ApiToken
  /** The variable it was read from, for the report. */
  tokenEnv?: string
  baseUrl?: string
  /** The state: the project's budget is shared there with every other fleetkit process. */
  pool: StatePool
  clock?: Clock
}

/**
 * The check as terminal lines. Names are as the provider (or whatever answers at --api-url) wrote them: shown
 * escaped, so an answer cannot move the cursor, start a line of its own or reverse the text after it.
 */
export function formatProviderCheck(result: ProviderCheckResult): string[] {
  return [
    `${result.apiUrl} answers with the token in ${result.tokenEnv}`,
    `locations: ${result.locations.join(', ')}`,
    `server types: ${result.serverTypes.map((t) => `${t.name} (${t.architecture})`).join(', ')}`,
    `request budget: ${result.budget.remaining} of ${result.budget.limit} an hour left`,
  ].map(shownOnTerminal)
}

export async function checkProvider(options: ProviderCheckOptions): Promise<ProviderCheckResult> {
  const token = options.token
  const client = new HetznerClient(
    {
      budget: sharedRateBudget(options.pool, token.budgetKey()),
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    },
    token,
  )
  const locations = await client.listLocations()
  const types = await client.listServerTypes()
  const budget = await readRateLimit(options.pool, { provider: 'hetzner', projectKey: token.budgetKey() })
  return {
    apiUrl: options.baseUrl ?? DEFAULT_HETZNER_API_URL,
    tokenEnv: options.tokenEnv ?? DEFAULT_TOKEN_ENV,
    locations: locations.map((l) => l.name).sort(),
    serverTypes: types
      .filter((t) => !t.deprecated)
      .map((t) => ({ name: t.name, architecture: t.architecture, cores: t.cores, memoryGb: t.memory, diskGb: t.disk }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    budget: { limit: budget?.limit ?? 0, remaining: Math.floor(budget?.remaining ?? 0) },
  }
}
