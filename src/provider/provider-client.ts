// The Hetzner client a provisioning command uses: the token from the variable the definition's
// providers.hetzner.tokenEnv names (HETZNER_API_TOKEN by default), the API URL from --api-url /
// HETZNER_API_URL, else the definition's endpoint, else the public API; the budget shared through the state.
// Callers get the Provider interface (provider.ts), not the class.
import type { StatePool } from '../store/transaction.js'

import type { Definition } from '../definition/types.js'
import { apiTokenFromEnv, DEFAULT_TOKEN_ENV } from './api-token.js'
import { HetznerClient, type HetznerClientOptions } from './hetzner.js'
import type { Provider } from './provider.js'
import { sharedRateBudget } from './shared-rate-budget.js'

export function providerClient(
  pool: StatePool,
  definition: Definition | undefined,
  options: { env: NodeJS.ProcessEnv; apiUrl?: string; tokenEnv?: string } & Omit<
    HetznerClientOptions,
    'env' | 'budget' | 'baseUrl'
  >,
): Provider {
  const tokenEnv = options.tokenEnv ?? definition?.providers?.hetzner?.tokenEnv ?? DEFAULT_TOKEN_ENV
  const token = apiTokenFromEnv(options.env, tokenEnv)
  const baseUrl = options.apiUrl ?? definition?.providers?.hetzner?.endpoint
  const { env: _env, apiUrl: _apiUrl, tokenEnv: _tokenEnv, ...rest } = options
  return new HetznerClient(
    { ...rest, budget: sharedRateBudget(pool, token.budgetKey()), ...(baseUrl ? { baseUrl } : {}) },
    token,
  )
}
