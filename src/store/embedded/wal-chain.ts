// The names in an archive's wal/ as PostgreSQL writes them, and whether the segments from a base backup's
// start run without a gap to the newest one: what a restore from that archive can replay.

/** A file archive_command finished: a segment, a timeline history or a backup history file (never a `.part`). */
export function isFinishedWalFile(name: string): boolean {
  return (
    /^[0-9A-F]{24}$/.test(name) ||
    /^[0-9A-F]{8}\.history$/.test(name) ||
    /^[0-9A-F]{24}\.[0-9A-F]{8}\.backup$/.test(name)
  )
}

/** A segment's timeline and position (log and segment number, 16 hex digits); undefined for other files. */
export function segmentOf(name: string): { timeline: number; position: string } | undefined {
  const match = /^([0-9A-F]{8})([0-9A-F]{16})$/.exec(name)
  return match ? { timeline: Number.parseInt(match[1]!, 16), position: match[2]! } : undefined
}

/** The position after `position`: 16 MiB segments, 256 of them to a log file. */
export function nextPosition(position: string): string {
  const log = Number.parseInt(position.slice(0, 8), 16)
  const segment = Number.parseInt(position.slice(8), 16)
  const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, '0')
  return segment >= 0xff ? hex8(log + 1) + hex8(0) : hex8(log) + hex8(segment + 1)
}

export interface WalChain {
  /** The newest segment (by position, then timeline) on `timeline` or later; null when there is none. */
  newest: string | null
  /** Positions from the start to the newest with no segment on `timeline` or later (the first 20). */
  missing: string[]
  /**
   * @minimum 0
   * @asType integer
   */
  missingCount: number
}

/**
 * From `start` (a base backup's first segment position, on its `timeline`) to the newest segment: each
 * position must have a segment of that timeline or a later one (a restore promoted since goes on on a
 * new timeline from where it switched).
 */
export function walChain(names: readonly string[], start: string, timeline: number): WalChain {
  const have = new Set<string>()
  let newest: { name: string; position: string } | null = null
  for (const name of names) {
    const seg = segmentOf(name)
    if (!seg || seg.timeline < timeline || seg.position < start) continue
    have.add(seg.position)
    if (!newest || seg.position > newest.position || (seg.position === newest.position && name > newest.name))
      newest = { name, position: seg.position }
  }
  const missing: string[] = []
  let missingCount = 0
  if (newest) {
    for (let p = start; p <= newest.position; p = nextPosition(p)) {
      if (have.has(p)) continue
      missingCount++
      if (missing.length < 20) missing.push(p)
    }
  } else {
    missingCount = 1
    missing.push(start)
  }
  return { newest: newest?.name ?? null, missing, missingCount }
}
