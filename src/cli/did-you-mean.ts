// "Did you mean": the known commands, flags and failure codes closest to a mistyped one, by edit
// distance. Commands are compared over the whole command line as typed
// (`db stat` against `db status`), so topics and verbs both count.
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

/**
 * Up to `limit` of a command's flags near a mistyped `--flag`, closest first: within a third of its
 * length (at least 2 edits), or starting with what was typed (`--lim` → `--limit`).
 */
export function suggestFlags(typed: string, known: readonly string[], limit = 2): string[] {
  const wanted = typed.trim().toLowerCase()
  if (!wanted.startsWith('-') || wanted.replace(/^-+/, '') === '') return []
  const flag = `--${wanted.replace(/^-+/, '')}`
  const allowed = Math.max(2, Math.floor(flag.length / 3))
  return known
    .map((name) => ({ name, distance: editDistance(flag, name) }))
    .filter(({ name, distance }) => distance <= allowed || name.startsWith(flag))
    .sort((x, y) => x.distance - y.distance || x.name.localeCompare(y.name))
    .slice(0, limit)
    .map(({ name }) => name)
}

/**
 * Up to `limit` registered failure codes near a mistyped one (`SYNC_PLAN_STAL`), closest first:
 * within a quarter of its length (at least 2 edits), or starting with what was typed (`SYNC_PLAN`).
 */
export function suggestCodes(typed: string, known: readonly string[], limit = 3): string[] {
  const wanted = typed
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '_')
  if (wanted === '') return []
  const allowed = Math.max(2, Math.floor(wanted.length / 4))
  return known
    .map((code) => ({ code, distance: editDistance(wanted, code) }))
    .filter(({ code, distance }) => distance <= allowed || (wanted.length >= 4 && code.startsWith(wanted)))
    .sort((x, y) => x.distance - y.distance || x.code.localeCompare(y.code))
    .slice(0, limit)
    .map(({ code }) => code)
}
