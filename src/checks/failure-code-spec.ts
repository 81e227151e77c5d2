// The shape of one registered failure code. Kept apart from the registry so the
// per-family code files can import it without a cycle.
export interface FailureCodeSpec {
  /** One line: what happened, in the operator's words. */
  summary: string
  /** True when only a person can fix it (a login, an approval, hardware, an edit only the operator makes). */
  person: boolean
  /** Process exit code for the CLI; 1 when absent. */
  exitCode?: number
}
