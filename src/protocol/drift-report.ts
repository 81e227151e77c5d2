// The drift digest an agent sends with its heartbeat (issue 39): the host's fingerprint digest as
// fleetkit-drift-check.timer computed it, with one digest per part so the gateway can say which part
// moved, or why there is none. An old agent sends no `drift`; a malformed one counts as none.
import { WireFormatError, field, readObject, readString, readTime } from './wire-format.js'

/** Why an agent has no digest to send: no state file yet, one too old (the timer stopped), one without a list, unreadable. */
const DRIFT_UNAVAILABLE = ['no_state', 'stale', 'no_list', 'unreadable'] as const
type DriftUnavailable = (typeof DRIFT_UNAVAILABLE)[number]

export interface DriftDigest {
  /** The fingerprint's digest over every item (what sync records as the node's digest). */
  digest: string
  /** SHA-256 of the item keys: which resources were read (another list than the recorded one is not drift). */
  keys_sha256: string
  /** One digest per part (kind: nft, sshd, unit, path, package, sysctl ...). */
  parts: Record<string, string>
  /** When the host's check ran, on the host's clock. */
  checked_at: string
}

export type DriftReport = DriftDigest | { unavailable: DriftUnavailable }

/** A fingerprint has about a dozen kinds; more is not a fingerprint. */
export const DRIFT_PARTS_MAX = 32
const SHA256 = /^[0-9a-f]{64}$/
const PART = /^[a-z][a-z0-9_]{0,31}$/

const readSha = (value: unknown, path: string) =>
  readString(value, path, { max: 64, pattern: SHA256, expected: 'a SHA-256 in hex' })

/** `drift` of a heartbeat: absent, null or malformed is null (the node's drift is then unknown, its heartbeat counts). */
export function readDriftReport(value: unknown): DriftReport | null {
  if (value === undefined || value === null) return null
  try {
    const o = readObject(value, 'drift')
    const unavailable = field(o, 'unavailable')
    if (unavailable !== undefined)
      return (DRIFT_UNAVAILABLE as readonly unknown[]).includes(unavailable)
        ? { unavailable: unavailable as DriftUnavailable }
        : null
    const partsIn = readObject(field(o, 'parts'), 'drift.parts')
    const names = Object.keys(partsIn)
    if (names.length === 0 || names.length > DRIFT_PARTS_MAX)
      throw new WireFormatError('drift.parts', `must have 1 to ${DRIFT_PARTS_MAX} parts`)
    const parts: Record<string, string> = {}
    for (const name of names) {
      if (!PART.test(name)) throw new WireFormatError('drift.parts', 'must be named by kind')
      parts[name] = readSha(partsIn[name], `drift.parts.${name}`)
    }
    return {
      digest: readSha(field(o, 'digest'), 'drift.digest'),
      keys_sha256: readSha(field(o, 'keys_sha256'), 'drift.keys_sha256'),
      parts,
      checked_at: readTime(field(o, 'checked_at'), 'drift.checked_at'),
    }
  } catch (error) {
    if (error instanceof WireFormatError) return null
    throw error
  }
}
