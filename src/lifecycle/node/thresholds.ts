// The sweep's thresholds from the environment: FLEETKIT_NODE_UNHEALTHY_AFTER (90 s) and
// FLEETKIT_NODE_LOST_AFTER (300 s, at least 30 and above the unhealthy one).
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'

export interface SweepThresholds {
  /**
   * @minimum 5
   * @asType integer
   */
  unhealthyAfterSeconds: number
  /**
   * @minimum 30
   * @asType integer
   */
  lostAfterSeconds: number
}

export const DEFAULT_THRESHOLDS: SweepThresholds = { unhealthyAfterSeconds: 90, lostAfterSeconds: 300 }

/** How recently a node must have heartbeated for `node admit` (spec 06). */
export const ADMIT_FRESH_SECONDS = 60

export function loadSweepThresholds(env: Env = process.env): SweepThresholds {
  const set = readThresholdVariables(env)
  const unhealthy = set.unhealthyAfterSeconds ?? DEFAULT_THRESHOLDS.unhealthyAfterSeconds
  const lost = set.lostAfterSeconds ?? DEFAULT_THRESHOLDS.lostAfterSeconds
  if (lost <= unhealthy) {
    throw invalid(
      'FLEETKIT_NODE_LOST_AFTER',
      `(${lost}) must be greater than FLEETKIT_NODE_UNHEALTHY_AFTER (${unhealthy}): a node becomes unhealthy before it is lost`,
    )
  }
  return { unhealthyAfterSeconds: unhealthy, lostAfterSeconds: lost }
}

/**
 * Only the variables this environment sets, each checked on its own (not against the other): `fleetkit sweep`
 * compares them with the thresholds a gateway recorded, a variable left unset agreeing with any.
 */
export function readThresholdVariables(env: Env): Partial<SweepThresholds> {
  const unhealthy = seconds(env, 'FLEETKIT_NODE_UNHEALTHY_AFTER', 5)
  const lost = seconds(env, 'FLEETKIT_NODE_LOST_AFTER', 30)
  return {
    ...(unhealthy === undefined ? {} : { unhealthyAfterSeconds: unhealthy }),
    ...(lost === undefined ? {} : { lostAfterSeconds: lost }),
  }
}

function seconds(env: Env, name: string, min: number): number | undefined {
  const text = env[name]?.trim()
  if (!text) return undefined
  if (!/^\d{1,7}$/.test(text))
    throw invalid(name, `${JSON.stringify(text.slice(0, 32))} is not a whole number of seconds`)
  const n = Number(text)
  if (n < min) throw invalid(name, `${n} is below the minimum of ${min} seconds`)
  return n
}

function invalid(name: string, problem: string): FleetkitError {
  return new FleetkitError('LIFECYCLE_CONFIG_INVALID', `${name} ${problem}`, {
    actions: [`unset ${name} to use its default, or correct it (docs/operations.md, "The sweep")`],
    data: { variable: name },
  })
}
