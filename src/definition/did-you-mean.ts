// "did you mean" for a name that is not declared: the closest known name within two edits.
// Used for misspelt fields, pool, canary, node and server-type names.

/** `; did you mean "x"?` for a typo within two edits of a known name, else nothing. */
export function didYouMean(name: string, known: readonly string[]): string {
  const best = closestName(name, known)
  return best === undefined ? '' : `; did you mean "${best}"?`
}

/**
 * Up to `limit` known names near `typed`, closest first: within a third of the typed length (at
 * least 2 edits), or starting with what was typed (`build` → `build-01`). The rule behind every
 * "did you mean" list: commands (src/cli/did-you-mean.ts) and node ids.
 */
export function nearestNames(typed: string, known: readonly string[], limit = 3): string[] {
  const wanted = typed.trim().toLowerCase()
  if (wanted === '') return []
  const allowed = Math.max(2, Math.floor(wanted.length / 3))
  return known
    .map((name) => ({ name, distance: editDistance(wanted, name.toLowerCase()) }))
    .filter(({ name, distance }) => distance <= allowed || name.toLowerCase().startsWith(wanted))
    .sort((x, y) => x.distance - y.distance || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map(({ name }) => name)
}

function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase(), 2)
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best
}

/**
 * Levenshtein distance (insertions, deletions and substitutions each cost one). With `within`,
 * pairs that cannot be that close, or a value too long to be a name (a hostile one), are
 * Infinity without the quadratic walk.
 */
export function editDistance(a: string, b: string, within = Number.POSITIVE_INFINITY): number {
  if (Number.isFinite(within) && (Math.abs(a.length - b.length) > within || a.length > 256))
    return Number.POSITIVE_INFINITY
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
