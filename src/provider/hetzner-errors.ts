// Hetzner Cloud's error bodies ({"error": {code, message, details}}) mapped to fleetkit's codes as
// spec 06 lists them; the provider's own code, the HTTP status and X-Correlation-Id stay in data.
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { FailureCode } from '../checks/failure-codes.js'
import type { HetznerErrorCode } from './hetzner-error-codes.js'

/** What a failed response said, already parsed. */
export interface ApiFailure {
  status: number
  /** The API's error code (`resource_limit_exceeded`), or `http_<status>` when the body had none. */
  apiCode: string
  message: string
  details: unknown
  correlationId: string | undefined
}

interface Mapping {
  code: FailureCode
  action: string
}

// Written as `code: 'X'` so the codes-have-runbooks rule sees every use; keyed by the API's codes only.
const BY_API_CODE: Record<string, Mapping> = {
  resource_limit_exceeded: {
    code: 'PROVIDER_QUOTA_EXCEEDED',
    action: 'raise the limit in the Hetzner Cloud console (Project > Limits), or delete unused resources',
  },
  resource_unavailable: {
    code: 'PROVIDER_TYPE_UNAVAILABLE',
    action: 'try another location or server type (a sold-out type comes back later)',
  },
  rate_limit_exceeded: { code: 'PROVIDER_RATE_LIMITED', action: 'wait until the budget refills, then run it again' },
  uniqueness_error: { code: 'PROVIDER_NAME_CONFLICT', action: 'rename or delete the resource that holds the name' },
  invalid_input: { code: 'PROVIDER_INPUT_INVALID', action: 'correct the field the message names' },
  json_error: { code: 'PROVIDER_INPUT_INVALID', action: 'report this request body as a fleetkit bug' },
  unauthorized: { code: 'PROVIDER_UNAUTHORIZED', action: 'create a new read/write API token in the project' },
  token_readonly: { code: 'PROVIDER_UNAUTHORIZED', action: 'create a read/write API token (this one is read-only)' },
  forbidden: { code: 'PROVIDER_UNAUTHORIZED', action: 'use a token of the project that owns the resource' },
  maintenance: { code: 'PROVIDER_UNAVAILABLE', action: 'wait for the maintenance to end (status.hetzner.com)' },
  server_error: { code: 'PROVIDER_UNAVAILABLE', action: 'run it again later (status.hetzner.com)' },
  unavailable: { code: 'PROVIDER_UNAVAILABLE', action: 'run it again later (status.hetzner.com)' },
  timeout: { code: 'PROVIDER_UNAVAILABLE', action: 'run it again later (status.hetzner.com)' },
} satisfies Partial<Record<HetznerErrorCode, Mapping>>

const OTHER: Mapping = { code: 'PROVIDER_ERROR', action: 'read the provider message; fleetkit runbook PROVIDER_ERROR' }

/** Reads an error response's body; a body that is not the API's shape still gives a failure. */
export function parseApiFailure(status: number, bodyText: string, correlationId: string | undefined): ApiFailure {
  let error: { code?: unknown; message?: unknown; details?: unknown } | undefined
  try {
    const parsed = JSON.parse(bodyText) as { error?: typeof error }
    error = typeof parsed?.error === 'object' && parsed.error !== null ? parsed.error : undefined
  } catch {
    error = undefined
  }
  const apiCode = typeof error?.code === 'string' && /^[a-z_]{1,64}$/.test(error.code) ? error.code : `http_${status}`
  const message = typeof error?.message === 'string' ? error.message.slice(0, 300) : `HTTP ${status}`
  return { status, apiCode, message, details: error?.details, correlationId }
}

/** The fields (invalid_input, uniqueness_error) or limits (resource_limit_exceeded) the details name. */
function detailNames(details: unknown): string[] {
  if (typeof details !== 'object' || details === null) return []
  const lists = [(details as { fields?: unknown }).fields, (details as { limits?: unknown }).limits]
  return lists.flatMap((list) =>
    Array.isArray(list)
      ? list.flatMap((entry: unknown) => {
          const name = (entry as { name?: unknown } | null)?.name
          return typeof name === 'string' ? [name.slice(0, 64)] : []
        })
      : [],
  )
}

/** The FleetkitError for a failed call; `what` says which call (`POST /servers`). */
export function providerError(failure: ApiFailure, what: string): FleetkitError {
  const mapping =
    failure.status >= 500 && !BY_API_CODE[failure.apiCode]
      ? BY_API_CODE.server_error!
      : (BY_API_CODE[failure.apiCode] ?? OTHER)
  const names = detailNames(failure.details)
  const named = names.length > 0 ? ` (${names.join(', ')})` : ''
  return new FleetkitError(
    mapping.code,
    `Hetzner Cloud refused ${what}: ${failure.apiCode}: ${failure.message}${named}`,
    {
      actions: [mapping.action],
      data: {
        status: failure.status,
        providerCode: failure.apiCode,
        ...(names.length > 0 ? { fields: names } : {}),
        ...(failure.correlationId ? { correlationId: failure.correlationId } : {}),
      },
    },
  )
}

/**
 * No usable answer: a 5xx, a timeout or a broken connection. `ambiguous` says the request may have
 * taken effect (a create must look before it tries again).
 */
export function unavailableError(what: string, reason: string, attempts: number, apiUrl: string): FleetkitError {
  // Which API was asked: the public one (its status page helps) or another (a stub or proxy that may not run).
  const hetzner = new URL(apiUrl).hostname === 'api.hetzner.cloud'
  return new FleetkitError(
    'PROVIDER_UNAVAILABLE',
    `Hetzner Cloud at ${apiUrl} did not answer ${what} usably after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${reason}`,
    {
      actions: hetzner
        ? [
            'run it again later (status.hetzner.com)',
            'a local stub instead: export HETZNER_API_URL (fleetkit provider stub prints it)',
          ]
        : [`check that the API at ${apiUrl} runs (HETZNER_API_URL, --api-url or providers.hetzner.endpoint)`],
      data: { ambiguous: true, reason, attempts, apiUrl },
    },
  )
}
