// The table `fleetkit drift` prints: one row per node and role that would change, and a row per
// node that is in line (or could not be checked), so no node is silently absent; then what the
// hosts were compared with.
import { differenceLines, type SyncReport } from './sync-report.js'

export function formatDriftTable(report: SyncReport): string[] {
  // The fourth column: lines printed under the row, each changed task of the role with what differs.
  const rows: [string, string, string, string[]][] = []
  for (const n of report.nodes) {
    if (n.state === 'changed') {
      for (const [role, tasks] of Object.entries(n.changes)) {
        const under = n.differences
          .filter((d) => d.role === role)
          .flatMap((d) => [`    ${d.task}:`, ...differenceLines(d).map((l) => `        ${l}`)])
        rows.push([n.node, role, `${tasks.length} task(s) would change: ${tasks.join('; ')}`, under])
      }
    } else if (n.state === 'converged') {
      rows.push([n.node, '-', 'no drift', []])
    } else {
      rows.push([
        n.node,
        '-',
        `${n.state.replace('_', ' ')}${n.code ? ` ${n.code}` : ''}${n.message ? `: ${n.message}` : ''}`,
        [],
      ])
    }
  }
  const width = (i: 0 | 1) => Math.max(i === 0 ? 4 : 4, ...rows.map((r) => r[i].length))
  const pad = (text: string, w: number) => text.padEnd(w)
  const w0 = width(0)
  const w1 = width(1)
  // What the hosts were compared with: without --ref that is the revision the last complete sync applied.
  const against =
    report.revision === null
      ? 'the definition file as it is on disk (not a committed revision)'
      : `revision ${report.revision}`
  return [
    `${pad('NODE', w0)}  ${pad('ROLE', w1)}  DRIFT`,
    ...rows.flatMap((r) => [`${pad(r[0], w0)}  ${pad(r[1], w1)}  ${r[2]}`, ...r[3]]),
    `Compared with ${against}.`,
  ]
}
