// Failure codes of `fleetkit demo`: what it needs before it starts, and a step that did not reach
// its state in time.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const DEMO_CODES = {
  DEMO_PREREQUISITE_MISSING: {
    summary:
      'fleetkit demo cannot start: the agent bundle is not built, a tool the seed runs (bash, curl, openssl, zstd, tar) is missing, or the temporary directory (TMPDIR) is not a writable directory.',
    person: true,
  },
  DEMO_STEP_FAILED: {
    summary:
      'A step of fleetkit demo did not reach its state in time (a process exited, or the fleet did not change as expected); everything it started was stopped and removed.',
    person: false,
  },
} as const satisfies Record<string, FailureCodeSpec>
