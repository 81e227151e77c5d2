// Failure codes of the CLI itself: usage mistakes and fleetkit's own bugs.
import type { FailureCodeSpec } from '../failure-code-spec.js'

export const CLI_CODES = {
  USAGE_INVALID: { summary: 'The command line has an unknown flag, a missing argument or a bad value.', person: false, exitCode: 2 },
  INTERNAL_ERROR: { summary: 'fleetkit hit a bug: an error it did not expect.', person: true, exitCode: 70 },
  RUNBOOK_CODE_UNKNOWN: { summary: 'No failure code of that name is registered.', person: false },
} as const satisfies Record<string, FailureCodeSpec>
