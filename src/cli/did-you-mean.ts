// "Did you mean": the known commands closest to a mistyped one, by edit distance over the
// whole command line as typed (`db stat` against `db status`), so topics and verbs both count.

/** Levenshtein distance: insertions, deletions and substitutions each cost one. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution))
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * Up to `limit` known commands near `typed`, closest first: within a third of the typed length
 * (at least 2 edits), or starting with what was typed (`release` → `release pack`).
 */
export function suggestCommands(typed: string, known: readonly string[], limit = 3): string[] {
  const wanted = typed.trim().toLowerCase()
  if (wanted === '') return []
  const allowed = Math.max(2, Math.floor(wanted.length / 3))
  return known
    .map((command) => ({ command, distance: editDistance(wanted, command) }))
    .filter(({ command, distance }) => distance <= allowed || command.startsWith(`${wanted} `) || command.startsWith(wanted))
    .sort((x, y) => x.distance - y.distance || x.command.localeCompare(y.command))
    .slice(0, limit)
    .map(({ command }) => command)
}
