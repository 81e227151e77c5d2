// The rule the gateway judges a host's drift digest by: the digest against the fingerprint its last
// sync recorded, and the parts that differ, computed from the recorded items exactly as the host's
// check computes its parts (ansible/playbooks/library/fleetkit_fingerprint.py parts() and keys_digest()).
import { sha256Hex } from '../../pki/fingerprint.js'
import type { DriftReport } from '../../protocol/drift-report.js'
import type { DriftBaseline, DriftVerdict } from '../../store/nodes/node-drift.js'

/** A recorded fingerprint as the judge uses it: digests only, computed once per read. */
export interface JudgedBaseline {
  digest: string
  keysSha256: string
  parts: Record<string, string>
  runId: number
}

// Python's sorted() of str orders by code point; so does this (localeCompare would not).
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** One digest per kind: the lines "key<TAB>value" of its items in key order, joined by newlines. */
export function fingerprintParts(items: Record<string, string>): Record<string, string> {
  const lines = new Map<string, string[]>()
  for (const key of Object.keys(items).sort(byCodePoint)) {
    const colon = key.indexOf(':')
    const kind = colon < 0 ? key : key.slice(0, colon)
    const list = lines.get(kind) ?? []
    list.push(`${key}\t${items[key]}`)
    lines.set(kind, list)
  }
  return Object.fromEntries([...lines].map(([kind, l]) => [kind, sha256Hex(l.join('\n'))]))
}

/** Which resources were read: the item keys in order, one a line. */
export function fingerprintKeysDigest(items: Record<string, string>): string {
  return sha256Hex(Object.keys(items).sort(byCodePoint).join('\n'))
}

export function judgedBaseline(recorded: DriftBaseline): JudgedBaseline {
  return {
    digest: recorded.digest,
    keysSha256: fingerprintKeysDigest(recorded.items),
    parts: fingerprintParts(recorded.items),
    runId: recorded.runId,
  }
}

/**
 * The verdict on one report. Drifted only when the host read the same resources as the recorded
 * fingerprint and found another digest; no report, no fingerprint or another list is unknown. A node
 * being synced now is unknown (syncing) until it matches. A node whose definition changed since its last sync is not judged here: its fingerprint still stands until a
 * sync records a new one ("behind", src/lifecycle/view/node-drift.ts).
 */
export function judgeDrift(
  baseline: JudgedBaseline | null,
  report: DriftReport,
  options: { syncing?: boolean } = {},
): DriftVerdict {
  const unknown = (reason: string): DriftVerdict => ({
    state: 'unknown',
    parts: [],
    reason,
    digest: 'digest' in report ? report.digest : null,
    fingerprintRunId: baseline?.runId ?? null,
    hostCheckedAt: 'digest' in report ? new Date(report.checked_at) : null,
  })
  if ('unavailable' in report) return unknown(report.unavailable)
  if (baseline === null) return unknown('no_fingerprint')
  if (report.keys_sha256 !== baseline.keysSha256) return unknown('other_resources')
  const base = {
    reason: null,
    digest: report.digest,
    fingerprintRunId: baseline.runId,
    hostCheckedAt: new Date(report.checked_at),
  }
  if (report.digest === baseline.digest) return { state: 'in_sync', parts: [], ...base }
  // Part-way through a converge the host matches neither fingerprint: the sync's own result decides.
  if (options.syncing === true) return unknown('syncing')
  const kinds = new Set([...Object.keys(baseline.parts), ...Object.keys(report.parts)])
  const parts = [...kinds].filter((k) => baseline.parts[k] !== report.parts[k]).sort(byCodePoint)
  // The same parts and another digest: the report's parts do not add up; say so rather than name none.
  return { state: 'drifted', parts: parts.length > 0 ? parts : ['digest'], ...base }
}
