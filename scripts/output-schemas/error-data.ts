// The `data` of the error envelopes some commands print with a shape worth stating. The code
// builds these as object literals where it throws (named below), so their types live here, over
// the product's own types; generate-output-schemas.ts reads them through schema/output-types.json.
import type { DefinitionError } from '../../src/definition/types.js'
import type { SweepThresholds } from '../../src/lifecycle/node/thresholds.js'
import type { FleetReadyResult } from '../../src/lifecycle/view/fleet-ready.js'
import type { CheckResult } from '../../src/protocol/check-result.js'
import type { JobStatus } from '../../src/store/scheduling/jobs.js'
import type { SyncReport } from '../../src/sync/sync-report.js'

/** data of DEFINITION_INVALID / DEFINITION_UNREADABLE (definitionErrorsToFleetkitError in src/definition/load.ts). */
export interface DefinitionErrorsData {
  path: string
  ref?: string
  /**
   * @asType integer
   * @nullable
   */
  line?: number | null
  /**
   * @asType integer
   * @nullable
   */
  column?: number | null
  /** @minItems 1 */
  errors: DefinitionError[]
}

/** data of a sync or drift run that did not converge (outcomeError in src/sync/sync-report.ts): the run's report. */
export interface SyncErrorData {
  report?: SyncReport
}

/** data of FLEET_NOT_READY (notReadyError in src/lifecycle/view/fleet-ready.ts): the whole verdict. */
export interface FleetNotReadyData {
  verdict?: FleetReadyResult
}

/** data of a failed `node check` (src/lifecycle/node/node-check.ts): the node, its checks job and what the job reported. */
export interface NodeCheckErrorData {
  nodeId?: string
  /** @format uuid */
  jobId?: string
  jobStatus?: JobStatus
  checks?: CheckResult[]
  withdrawn?: boolean
  field?: string
  nodeStatus?: string
}

/** data of COMMAND_UNKNOWN (unknownCommandError in src/cli/unknown-command.ts). */
export interface UnknownCommandData {
  /** @minLength 1 */
  command?: string
  /** @maxItems 3 */
  suggestions?: Suggestion[]
}

/** @minLength 1 */
type Suggestion = string

/** data of `fleetkit sweep`'s refusals (the first three are always there for SWEEP_THRESHOLDS_DISAGREE) (src/lifecycle/node/manual-sweep.ts, src/lifecycle/node/thresholds.ts). */
export interface SweepErrorData {
  /** SWEEP_THRESHOLDS_DISAGREE: each variable set here that differs from the recorded threshold, with its value. */
  environment: Partial<Record<'FLEETKIT_NODE_UNHEALTHY_AFTER' | 'FLEETKIT_NODE_LOST_AFTER', number>>
  /** SWEEP_THRESHOLDS_DISAGREE: what the gateway recorded. */
  recorded: SweepThresholds
  /** SWEEP_THRESHOLDS_DISAGREE: the gateway that recorded them (host:PID:random). */
  holder: string
  /** LIFECYCLE_CONFIG_INVALID: the variable whose value fleetkit cannot use. */
  variable?: string
}
