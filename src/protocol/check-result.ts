// The checks job's result as the agent reports it and `fleetkit node check` reads it: one
// type for both sides; an unknown status, a malformed ID or an unregistered code is refused.
import { CHECK_ID_PATTERN } from '../checks/check-id-pattern.js'
import { type FailureCode, isFailureCode } from '../checks/failure-codes.js'
import {
  type Json,
  WireFormatError,
  field,
  printableText,
  readArray,
  readEnum,
  readObject,
  readString,
} from './wire-format.js'

/**
 * `not_applicable`: the check cannot apply to this host (a declared container has no kernel of its
 * own); counted neither as passed nor as failed, and never blocking admit.
 */
const CHECK_STATUSES = ['pass', 'warn', 'fail', 'not_applicable'] as const
type CheckStatus = (typeof CHECK_STATUSES)[number]

export interface CheckResult {
  /**
   * A check ID of schema/check-ids.json (`host:br-netfilter`).
   * @pattern ^[a-z]+:[a-z0-9-]+$
   */
  id: string
  status: CheckStatus
  /** A registered failure code; a failing check always names one. */
  code?: FailureCode
  /**
   * One line for a person, from the host: printable characters only.
   * @maxLength 500
   */
  detail: string
}

/** The `result` of a succeeded `checks` job. */
export interface ChecksJobResult {
  checks: CheckResult[]
}

const CHECKS_MAX = 200
const CHECK_DETAIL_MAX = 500

function readCheckResult(value: unknown, path: string): CheckResult {
  const o = readObject(value, path)
  const id = readString(field(o, 'id'), `${path}.id`, {
    max: 64,
    pattern: CHECK_ID_PATTERN,
    expected: 'a check ID like host:br-netfilter',
  })
  const status = readEnum(field(o, 'status'), `${path}.status`, CHECK_STATUSES)
  const rawCode = field(o, 'code')
  let code: FailureCode | undefined
  if (rawCode !== undefined && rawCode !== null) {
    const text = readString(rawCode, `${path}.code`, { max: 64 })
    if (!isFailureCode(text)) throw new WireFormatError(`${path}.code`, 'must be a registered failure code')
    code = text
  }
  if (status === 'fail' && code === undefined)
    throw new WireFormatError(`${path}.code`, 'a failing check must name its failure code')
  if (status === 'not_applicable' && code !== undefined)
    throw new WireFormatError(`${path}.code`, 'a check that does not apply names no failure code')
  const detail = printableText(
    readString(field(o, 'detail'), `${path}.detail`, { min: 0, max: 4 * CHECK_DETAIL_MAX }),
    CHECK_DETAIL_MAX,
  )
  return code === undefined ? { id, status, detail } : { id, status, code, detail }
}

/** A succeeded checks job's result: at least one check, each ID once. */
export function readChecksJobResult(value: unknown, path = 'result'): ChecksJobResult {
  const o: Json = readObject(value, path)
  const items = readArray(field(o, 'checks'), `${path}.checks`, CHECKS_MAX)
  if (items.length === 0) throw new WireFormatError(`${path}.checks`, 'must report at least one check')
  const seen = new Set<string>()
  const checks = items.map((item, i) => {
    const check = readCheckResult(item, `${path}.checks[${i}]`)
    if (seen.has(check.id)) throw new WireFormatError(`${path}.checks[${i}].id`, 'reports a check ID twice')
    seen.add(check.id)
    return check
  })
  return { checks }
}
