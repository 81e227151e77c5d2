// The lifetime of an enrollment secret: a duration such as 15m, 2h, 900s or 1h30m,
// at least one minute and at most 24 hours (a seed is readable until the host enrolls).
import { FleetkitError } from '../checks/fleetkit-error.js'

const DEFAULT_SECRET_TTL_MS = 15 * 60 * 1000
const MAX_SECRET_TTL_MS = 24 * 60 * 60 * 1000
const MIN_SECRET_TTL_MS = 60 * 1000

const DURATION = /^(?:(\d{1,5})h)?(?:(\d{1,5})m)?(?:(\d{1,6})s)?$/

/** Milliseconds of a --ttl value; undefined means the default of 15 minutes. */
export function parseSecretTtl(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SECRET_TTL_MS
  const match = DURATION.exec(text.trim())
  if (!match || text.trim() === '') throw ttlInvalid(text)
  const ms = (Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0)) * 1000
  if (ms < MIN_SECRET_TTL_MS || ms > MAX_SECRET_TTL_MS) throw ttlInvalid(text)
  return ms
}

function ttlInvalid(text: string): FleetkitError {
  return new FleetkitError(
    'SEED_TTL_INVALID',
    `--ttl ${JSON.stringify(text.slice(0, 40))} is not a duration from 1m to 24h (for example 15m, 2h, 1h30m)`,
    {
      actions: ['pass --ttl 15m (the default) or up to --ttl 24h'],
      data: { expected: '1m..24h', actual: text.slice(0, 40) },
    },
  )
}
