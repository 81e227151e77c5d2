// SHA256SUMS in the format `sha256sum` writes and `sha256sum -c --strict` reads:
// one "<64 hex>  <name>" line per file, sorted by name, each ending in a newline.
import { createHash } from 'node:crypto'

export interface SumLine {
  sha256: string
  name: string
}

const LINE = /^([0-9a-f]{64}) [ *](.+)$/

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export function formatSha256Sums(lines: readonly SumLine[]): string {
  return [...lines]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((line) => `${line.sha256}  ${line.name}\n`)
    .join('')
}

/** Lines that are not in sha256sum format are skipped, as `sha256sum -c` would refuse them under --strict. */
export function parseSha256Sums(text: string): { lines: SumLine[]; malformed: number } {
  const lines: SumLine[] = []
  let malformed = 0
  for (const raw of text.split('\n')) {
    if (raw === '') continue
    const match = LINE.exec(raw)
    if (match) lines.push({ sha256: match[1]!, name: match[2]! })
    else malformed += 1
  }
  return { lines, malformed }
}
