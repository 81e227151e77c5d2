// The firewall role's normalisation of an nft ruleset (ansible/roles/firewall/filter_plugins/nft_lines.py,
// which a unit test holds this to) and the line difference host:firewall reports between two tables.

const PREAMBLE = new Set(['table inet fleetkit {}', 'delete table inet fleetkit'])
const IMPLIED = /\bmeta l4proto (?:icmp|ipv6-icmp) (?=icmp(?:v6)? type\b)/g
const SET = /\{ ([^{}]*) \}/g

// Python's sorted() of str orders by code point; so does this (localeCompare would not).
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

function normal(line: string): string {
  return line.replace(IMPLIED, '').replace(
    SET,
    (_, elements: string) =>
      `{ ${elements
        .split(',')
        .map((element) => element.trim())
        .sort(byCodePoint)
        .join(', ')} }`,
  )
}

/** The lines that decide a ruleset: no indentation, comments, blank lines or create-and-delete preamble. */
export function nftLines(ruleset: string): string[] {
  return ruleset
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#') && !PREAMBLE.has(line))
    .map(normal)
}

export interface LineDifference {
  /** Lines only one side has (a line moved counts twice: gone from one place, new in another). */
  count: number
  /** The first of them in table order: `+ line` the live table has, `- line` it lacks. */
  first: string | undefined
}

/** How `live` differs from `wanted`, line by line in order (rule order matters to nft). */
export function lineDifference(wanted: readonly string[], live: readonly string[]): LineDifference {
  // Longest common subsequence; a table is tens of lines, so the quadratic table is small.
  const n = wanted.length
  const m = live.length
  const common: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0))
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      common[i]![j] =
        wanted[i] === live[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!)
  let first: string | undefined
  for (let i = 0, j = 0; first === undefined && (i < n || j < m);) {
    if (i < n && j < m && wanted[i] === live[j]) {
      i++
      j++
    } else if (j < m && (i === n || common[i]![j + 1]! >= common[i + 1]![j]!)) first = `+ ${live[j]}`
    else first = `- ${wanted[i]}`
  }
  return { count: n + m - 2 * common[0]![0]!, first }
}
