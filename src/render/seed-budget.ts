// The 32 KiB user-data budget: a seed over it is gzipped (cloud-init decodes gzip user-data),
// and one still over it is refused with SEED_TOO_LARGE {expected, actual}.
import { gzipSync } from 'node:zlib'

import { FleetkitError } from '../checks/fleetkit-error.js'

export const SEED_BUDGET_BYTES = 32 * 1024

export interface BudgetedSeed {
  bytes: Buffer
  gzipped: boolean
  /** Size of the plain document, before any gzip. */
  plainBytes: number
}

export function fitSeedBudget(document: string, budget = SEED_BUDGET_BYTES): BudgetedSeed {
  const plain = Buffer.from(document, 'utf8')
  if (plain.length <= budget) return { bytes: plain, gzipped: false, plainBytes: plain.length }
  // mtime 0 in the gzip header (Node writes 0) keeps the output reproducible.
  const gzipped = gzipSync(plain, { level: 9 })
  if (gzipped.length <= budget) return { bytes: gzipped, gzipped: true, plainBytes: plain.length }
  throw new FleetkitError(
    'SEED_TOO_LARGE',
    `the seed is ${gzipped.length} bytes after gzip (${plain.length} plain), over the ${budget}-byte user-data budget`,
    {
      actions: ["shorten the CA bundle or the operators' keys in the fleet definition"],
      data: { expected: budget, actual: gzipped.length },
    },
  )
}
