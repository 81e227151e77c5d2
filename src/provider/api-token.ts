// The Hetzner Cloud API token, read from the environment and held so that it cannot be printed:
// JSON, string conversion and util.inspect all show "[redacted]"; only the bearer header carries it.
import { createHash } from 'node:crypto'
import { inspect } from 'node:util'

import { FleetkitError } from '../checks/fleetkit-error.js'

export const DEFAULT_TOKEN_ENV = 'HETZNER_API_TOKEN'

/** An environment variable's name (the definition's tokenEnv): never a value pasted by mistake. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/

const REDACTED = '[redacted]'

export class ApiToken {
  readonly #value: string

  constructor(value: string) {
    this.#value = value
  }

  /** The Authorization header's value: the one place the token leaves this object. */
  authorization(): string {
    return `Bearer ${this.#value}`
  }

  /**
   * Names the token's project budget in the state: 16 hex digits of its SHA-256, which tell tokens
   * apart without revealing one (the token itself never reaches the database).
   */
  budgetKey(): string {
    return createHash('sha256').update(this.#value).digest('hex').slice(0, 16)
  }

  /** `text` with every occurrence of the token replaced: for messages built from foreign text. */
  redact(text: string): string {
    return this.#value === '' ? text : text.split(this.#value).join(REDACTED)
  }

  toString(): string {
    return REDACTED
  }

  toJSON(): string {
    return REDACTED
  }

  [inspect.custom](): string {
    return REDACTED
  }
}

/** The token from `env[name]`; PROVIDER_TOKEN_MISSING names the variable (never its value) when it is unset. */
export function apiTokenFromEnv(env: NodeJS.ProcessEnv, name: string = DEFAULT_TOKEN_ENV): ApiToken {
  if (!ENV_NAME.test(name)) {
    throw new FleetkitError(
      'USAGE_INVALID',
      'the token variable must be the name of an environment variable (like HETZNER_API_TOKEN), not a token',
      { actions: [`export ${DEFAULT_TOKEN_ENV}=...   (then name it, not its value)`] },
    )
  }
  const value = env[name]?.trim() ?? ''
  if (value === '') {
    throw new FleetkitError('PROVIDER_TOKEN_MISSING', `${name} is unset or empty: no Hetzner Cloud API token`, {
      actions: [`export ${name}=...   (a read/write API token of the Hetzner Cloud project)`],
      data: { tokenEnv: name },
    })
  }
  return new ApiToken(value)
}
