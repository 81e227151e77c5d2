// "Did you mean": the known commands closest to a mistyped one, by edit distance over the
// whole command line as typed (`db stat` against `db status`), so topics and verbs both count.
import { editDistance } from '../definition/did-you-mean.js'

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
    .filter(
      ({ command, distance }) => distance <= allowed || command.startsWith(`${wanted} `) || command.startsWith(wanted),
    )
    .sort((x, y) => x.distance - y.distance || x.command.localeCompare(y.command))
    .slice(0, limit)
    .map(({ command }) => command)
}
