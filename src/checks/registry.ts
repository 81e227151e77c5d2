// What `fleetkit checks` reports: every failure code with its runbook line and
// every check ID with its owner, joined from the registries.
import { type CheckIdEntry, describeOwner, loadCheckIds } from './check-ids.js'
import { FAILURE_CODES } from './failure-codes.js'
import { findRunbookEntry, loadRunbooks } from './runbooks.js'

interface FailureCodeReport {
  code: string
  summary: string
  person: boolean
  exitCode: number
  runbook: string | null
}

interface CheckIdReport {
  id: string
  meaning: string
  owner: CheckIdEntry['owner']
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
