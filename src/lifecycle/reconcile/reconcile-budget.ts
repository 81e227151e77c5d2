// How much `fleetkit reconcile` may still do: at most M sync runs an hour, counted from the ledger's
// start times of its own runs (so a restart does not reset the budget), and its batches: a canary
// alone first, then at most N nodes per run.
const HOUR_MS = 3_600_000

export interface RunBudget {
  /** Runs it started in the hour before now. */
  used: number
  /** Runs it may start now. */
  left: number
  max: number
  /** When a run leaves the window and frees a slot; null while some are left. */
  nextSlotAt: Date | null
}

export function runBudget(options: { startedAt: readonly Date[]; now: Date; maxPerHour: number }): RunBudget {
  const since = options.now.getTime() - HOUR_MS
  const inWindow = options.startedAt
    .map((d) => d.getTime())
    .filter((t) => t > since)
    .sort((a, b) => a - b)
  const left = Math.max(0, options.maxPerHour - inWindow.length)
  // The oldest run that must leave the window before one more fits.
  const blocking = inWindow[inWindow.length - options.maxPerHour]
  return {
    used: inWindow.length,
    left,
    max: options.maxPerHour,
    nextSlotAt: left > 0 || blocking === undefined ? null : new Date(blocking + HOUR_MS),
  }
}

/** The start of the window the ledger is read from. */
export function budgetWindowStart(now: Date): Date {
  return new Date(now.getTime() - HOUR_MS)
}

/**
 * The runs of one pass, in order: the canary alone (the definition's canary when it is to be
 * repaired, else the first node by id), then the rest in id order, at most `parallel` per run.
 */
export function repairBatches(nodeIds: readonly string[], canary: string | null, parallel: number): string[][] {
  if (nodeIds.length === 0) return []
  const sorted = [...nodeIds].sort()
  const first = canary !== null && sorted.includes(canary) ? canary : sorted[0]!
  const rest = sorted.filter((id) => id !== first)
  const batches = [[first]]
  const size = Math.max(1, Math.floor(parallel))
  for (let i = 0; i < rest.length; i += size) batches.push(rest.slice(i, i + size))
  return batches
}
