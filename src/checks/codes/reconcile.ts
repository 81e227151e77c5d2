// Failure codes of `fleetkit reconcile` (src/lifecycle/reconcile/): its stop after a failed repair and
// its lock (docs/runbooks.md "Reconcile").
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const RECONCILE_CODES = {
  RECONCILE_STOPPED: {
    summary:
      'A repair run of fleetkit reconcile did not converge: reconcile stopped and does nothing until a person clears it.',
    person: true,
    exitCode: 26,
  },
  RECONCILE_IN_PROGRESS: {
    summary: "Another fleetkit reconcile holds this fleet's reconcile lock; one runs at a time.",
    person: false,
    exitCode: 27,
  },
} as const satisfies Record<string, FailureCodeSpec>
