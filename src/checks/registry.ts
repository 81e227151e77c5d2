// What `fleetkit checks` reports: every failure code with its runbook line and
// every check ID with its owner, joined from the registries.
import { type CheckIdEntry, describeOwner, loadCheckIds } from './check-ids.js'
import { FAILURE_CODES } from './failure-codes.js'
import { findRunbookEntry, loadRunbooks } from './runbooks.js'

interface FailureCodeReport {
  /** @pattern ^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$ */
  code: string
  /** @minLength 1 */
  summary: string
  person: boolean
  /**
   * @minimum 1
   * @asType integer
   */
  exitCode: number
  runbook: string | null
}

interface CheckIdReport {
  /** @pattern ^[a-z]+:([a-z0-9-]+|[a-z0-9-]*\*)$ */
  id: string
  /** @minLength 1 */
  meaning: string
  owner: CheckIdEntry['owner']
  /** @minLength 1 */
  ownerText: string
}

export interface RegistryReport {
  codes: FailureCodeReport[]
  checks: CheckIdReport[]
}

export async function describeRegistry(): Promise<RegistryReport> {
  const runbooks = await loadRunbooks()
  const codes = Object.entries(FAILURE_CODES)
    .map(([code, spec]) => ({
      code,
      summary: spec.summary,
      person: spec.person,
      exitCode: (spec as { exitCode?: number }).exitCode ?? 1,
      runbook: findRunbookEntry(runbooks, code)?.section.title ?? null,
    }))
    .sort((a, b) => a.code.localeCompare(b.code))
  const checks = loadCheckIds().map((entry) => ({
    id: entry.id,
    meaning: entry.meaning,
    owner: entry.owner,
    ownerText: describeOwner(entry.owner),
  }))
  return { codes, checks }
}
