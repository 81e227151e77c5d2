// `fleetkit events`: the fleet's event log, filtered by node, kind and time, in time order, optionally
// followed (polling by id after the greatest one shown, so nothing already printed is shown twice).
import { shownOnTerminal } from '../../protocol/terminal-text.js'
import type { Queryable } from '../../store/database.js'
import { type EventRow, listEvents } from '../../store/events.js'
import { waitFor, type WaitOptions } from '../wait.js'

export interface FleetEvent {
  /**
   * @minimum 1
   * @asType integer
   */
  id: number
  /** @format date-time */
  at: string
  /** @pattern ^[a-z][a-z0-9_]{0,63}$ */
  kind: string
  nodeId: string | null
  data: Record<string, unknown>
}

export interface EventsQuery {
  nodeId?: string
  kind?: string
  since?: Date
  limit?: number
}

export interface EventsPage {
  /** The newest events that match, at most the query's limit, oldest first. */
  events: FleetEvent[]
  /** Whether older events that match were left out by the limit. */
  olderLeftOut: boolean
}

export async function fleetEvents(pool: Queryable, query: EventsQuery): Promise<EventsPage> {
  const limit = query.limit ?? 1000
  // One more than asked: whether any older one matched is known without counting them all.
  const rows = await listEvents(pool, { ...query, limit: limit + 1 })
  const olderLeftOut = rows.length > limit
  return { events: (olderLeftOut ? rows.slice(1) : rows).map(toFleetEvent), olderLeftOut }
}

/** Calls `onEvent` for each new event after `afterId` until the signal aborts. */
export async function followEvents(
  pool: Queryable,
  query: EventsQuery & { afterId: number },
  onEvent: (event: FleetEvent) => void,
  wait: WaitOptions & { signal: AbortSignal },
): Promise<void> {
  let after = query.afterId
  while (!wait.signal.aborted) {
    await waitFor({
      ...wait,
      timeoutSeconds: 3600,
      probe: () => listEvents(pool, { ...query, afterId: after, limit: 1000 }),
      done: (rows) => rows.length > 0 || wait.signal.aborted,
    }).then(({ value }) => {
      for (const row of value) {
        onEvent(toFleetEvent(row))
        after = row.id
      }
    })
  }
}

function toFleetEvent(e: EventRow): FleetEvent {
  return { id: e.id, at: e.at.toISOString(), kind: e.kind, nodeId: e.nodeId, data: e.data }
}

/**
 * One event as a line of `fleetkit events`; control characters in its text are shown escaped (shownOnTerminal): an
 * event's text may come from a host (a job's failure), an operator's reason or an API caller. `--json` keeps it as it is.
 */
export function formatEvent(e: FleetEvent): string {
  const data = Object.entries(e.data)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ')
  return shownOnTerminal(`${e.at}  ${e.kind.padEnd(20)} ${(e.nodeId ?? '-').padEnd(16)} ${data}`.trimEnd())
}

/** `--since`: an ISO time, or a duration back from now (`90s`, `15m`, `2h`, `7d`). */
export function parseSince(text: string, now: Date): Date | undefined {
  const d = /^(\d{1,6})([smhd])$/.exec(text.trim())
  if (d)
    return new Date(
      now.getTime() - Number(d[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[d[2] as 's' | 'm' | 'h' | 'd'] * 1000,
    )
  const t = Date.parse(text)
  return Number.isNaN(t) ? undefined : new Date(t)
}
