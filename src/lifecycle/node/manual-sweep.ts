// `fleetkit sweep` by hand: the gateway's sweep, judged with the thresholds the gateways judge with. Those
// live in the gateway's environment (an installed gateway's /etc/fleetkit/gateway.env), which this process
// never sees; the sweep leader records them with its lease (src/store/nodes/sweep-leader.ts), so they are
// read from there. A sweep judged with other thresholds would make lost, irreversibly (jobs fenced,
// allocations released), nodes the gateways leave alone: FLEETKIT_NODE_* set here to other values are
// refused unless the operator asks for them by name (--thresholds-from-env).
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Env } from '../../config/state-dir.js'
import { recordSweepGap } from '../../store/nodes/sweep-gaps.js'
import { readSweepLease, type SweepLease } from '../../store/nodes/sweep-leader.js'
import { runSweep, type SweepResult } from './sweep.js'
import { loadSweepThresholds, readThresholdVariables, type SweepThresholds } from './thresholds.js'

/** Where a manual sweep's thresholds came from. */
type ThresholdsSource = 'gateway' | 'environment' | 'defaults'

interface RecordedThresholds {
  /** The gateway that recorded them: the sweep lease's holder, now or last. */
  holder: string
  thresholds: SweepThresholds
  /**
   * Its last claim or renewal of the lease (the database's clock).
   * @format date-time
   */
  recordedAt: string
  /** It holds the lease now: it sweeps every 2 s with these. False: it stopped or lost it, and no gateway sweeps. */
  holdsLease: boolean
}

export interface ThresholdsOrigin {
  /** gateway: recorded by a gateway; environment: FLEETKIT_NODE_* here; defaults: neither (90 s / 300 s). */
  source: ThresholdsSource
  /** What a gateway recorded, also when not used (--thresholds-from-env); absent when no gateway ever did. */
  recorded?: RecordedThresholds
}

export interface ManualSweepResult extends SweepResult {
  thresholdsFrom: ThresholdsOrigin
  /**
   * Seconds in which no gateway held the sweep lease (none ran, so none recorded heartbeats), recorded as a
   * sweep gap before this sweep judged: silence in it is not held against a node. Absent while one holds it.
   */
  unsweptSeconds?: number
}

/** The variable of each threshold, as the gateway reads it. */
const VARIABLE: Record<keyof SweepThresholds, string> = {
  unhealthyAfterSeconds: 'FLEETKIT_NODE_UNHEALTHY_AFTER',
  lostAfterSeconds: 'FLEETKIT_NODE_LOST_AFTER',
}

/**
 * The thresholds a manual sweep judges with: the ones a gateway recorded, unless `fromEnv` or none did (then
 * FLEETKIT_NODE_* here, else the defaults). A variable set here must agree with the recorded value
 * (SWEEP_THRESHOLDS_DISAGREE); one left unset agrees with any. A bad value is LIFECYCLE_CONFIG_INVALID either way.
 */
export function chooseManualThresholds(
  lease: SweepLease | undefined,
  env: Env,
  fromEnv: boolean,
): { thresholds: SweepThresholds; from: ThresholdsOrigin } {
  const set = readThresholdVariables(env)
  const recorded: RecordedThresholds | undefined =
    lease?.thresholds === undefined
      ? undefined
      : {
          holder: lease.holder,
          thresholds: { ...lease.thresholds },
          recordedAt: lease.renewedAt.toISOString(),
          holdsLease: lease.expiresAt.getTime() > lease.readAt.getTime(),
        }
  if (fromEnv || !recorded) {
    const source = Object.keys(set).length > 0 ? 'environment' : 'defaults'
    return { thresholds: loadSweepThresholds(env), from: { source, ...(recorded ? { recorded } : {}) } }
  }
  const differing = (Object.keys(VARIABLE) as (keyof SweepThresholds)[]).filter(
    (key) => set[key] !== undefined && set[key] !== recorded.thresholds[key],
  )
  if (differing.length > 0) throw disagreement(differing, set, recorded)
  return { thresholds: recorded.thresholds, from: { source: 'gateway', recorded } }
}

function disagreement(
  differing: (keyof SweepThresholds)[],
  set: Partial<SweepThresholds>,
  recorded: RecordedThresholds,
): FleetkitError {
  const names = differing.map((key) => VARIABLE[key])
  const here = Object.fromEntries(differing.map((key) => [VARIABLE[key], set[key]]))
  const hereText = differing.map((key) => `${VARIABLE[key]}=${set[key]}`).join(' ')
  const theirs = `${recorded.thresholds.unhealthyAfterSeconds} s / ${recorded.thresholds.lostAfterSeconds} s`
  const who = recorded.holdsLease ? 'the gateway that sweeps' : 'the gateway that swept last'
  return new FleetkitError(
    'SWEEP_THRESHOLDS_DISAGREE',
    `this environment sets ${hereText}, but ${who} (${recorded.holder}, recorded ${recorded.recordedAt}) judges with ${theirs} (unhealthy / lost): a sweep by hand would judge silence otherwise than the gateways do. Nothing was swept.`,
    {
      actions: [
        `unset ${names.join(' ')} and run fleetkit sweep again: it judges with the gateway's thresholds`,
        `fleetkit sweep --thresholds-from-env: judge with this environment's instead (a default for a variable it leaves unset); the jobs of a node it makes lost are fenced and its allocations released, which cannot be undone`,
      ],
      data: { environment: here, recorded: recorded.thresholds, holder: recorded.holder },
    },
  )
}

/** One sweep by hand (`fleetkit sweep`): the thresholds chosen as above, then the sweep itself. */
export async function runManualSweep(
  pool: StatePool,
  options: { env: Env; thresholdsFromEnv: boolean },
): Promise<ManualSweepResult> {
  const lease = await readSweepLease(pool)
  const { thresholds, from } = chooseManualThresholds(lease, options.env, options.thresholdsFromEnv)
  // As a gateway taking over a lease left unclaimed records the stretch (src/gateway/sweeper.ts): while no
  // gateway ran, no heartbeat could be recorded. Unswept for longer than two of its leases: not a quick hand-over.
  const unswept = lease ? unsweptSeconds(lease) : undefined
  if (unswept !== undefined) await recordSweepGap(pool, unswept, 'no_sweeper')
  return {
    ...(await runSweep(pool, thresholds)),
    thresholdsFrom: from,
    ...(unswept === undefined ? {} : { unsweptSeconds: Math.round(unswept) }),
  }
}

/** Seconds since the lease's last renewal, when it expired and lay unclaimed for more than two leases. */
function unsweptSeconds(lease: SweepLease): number | undefined {
  const readMs = lease.readAt.getTime()
  const leaseMs = lease.expiresAt.getTime() - lease.renewedAt.getTime()
  const sinceMs = readMs - lease.renewedAt.getTime()
  return lease.expiresAt.getTime() <= readMs && sinceMs > 2 * leaseMs ? sinceMs / 1000 : undefined
}
