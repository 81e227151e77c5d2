// The fleet's event log: one append-only row per thing that happened (enrolled, lost,
// rotation begun, ...), optionally about one node, with JSON details that hold no secret.
import type { Queryable } from './database.js'

export interface EventRow {
  id: number
  at: Date
  kind: string
  nodeId: string | null
  data: Record<string, unknown>
}

export interface NewEvent {
  /** snake_case, for example `node_enrolled`, `node_lost`, `ca_rotation_begun`. */
  kind: string
  nodeId?: string | null
  data?: Record<string, unknown>
  /**
   * When it happened; defaults to the database's clock at the insert (clock_timestamp(), not now(): a
   * transaction's start would stamp an event logged late in a long transaction before events that
   * other transactions logged meanwhile).
   */
  at?: Date
}

const EVENT_KIND = /^[a-z][a-z0-9_]{0,63}$/

export async function appendEvent(q: Queryable, event: NewEvent): Promise<EventRow> {
  if (!EVENT_KIND.test(event.kind)) throw new RangeError(`event kind ${JSON.stringify(event.kind)} is not snake_case`)
  const result = await q.query(
    `INSERT INTO events (at, kind, node_id, data) VALUES (COALESCE($1, clock_timestamp()), $2, $3, $4)
     RETURNING id, at, kind, node_id, data`,
    [event.at ?? null, event.kind, event.nodeId ?? null, JSON.stringify(event.data ?? {})],
  )
  return toEvent(result.rows[0] as Record<string, unknown>)
}

export interface EventFilter {
  nodeId?: string
  kind?: string
  /** Events at or after this time. */
  since?: Date
  /**
   * Events with an id greater than this, in the order they were inserted (for following the log: the
   * id is its cursor, so the next page starts after the greatest id of this one).
   */
  afterId?: number
  /**
   * At most this many, 1000 by default: the newest that match (listed oldest first), or with `afterId`
   * the first after it.
   */
  limit?: number
}

/**
 * The events that match, oldest first: by `at`, the time an operator reads, then by id (events of one
 * moment in the order they were inserted); past the limit, the newest ones (an incident's events are
 * the recent ones). With `afterId`, by id alone: what a follower has not seen yet, from the first.
 */
export async function listEvents(q: Queryable, filter: EventFilter = {}): Promise<EventRow[]> {
  const where = `WHERE ($1::text IS NULL OR node_id = $1) AND ($2::text IS NULL OR kind = $2)
       AND ($3::timestamptz IS NULL OR at >= $3) AND ($4::bigint IS NULL OR id > $4)`
  const result = await q.query(
    filter.afterId === undefined
      ? `SELECT * FROM (SELECT id, at, kind, node_id, data FROM events ${where} ORDER BY at DESC, id DESC LIMIT $5) newest
         ORDER BY at, id`
      : `SELECT id, at, kind, node_id, data FROM events ${where} ORDER BY id LIMIT $5`,
    [
      filter.nodeId ?? null,
      filter.kind ?? null,
      filter.since ?? null,
      filter.afterId ?? null,
      Math.max(1, Math.min(filter.limit ?? 1000, 100_000)),
    ],
  )
  return result.rows.map((r) => toEvent(r as Record<string, unknown>))
}

function toEvent(r: Record<string, unknown>): EventRow {
  return {
    id: Number(r.id),
    at: r.at as Date,
    kind: r.kind as string,
    nodeId: r.node_id as string | null,
    data: r.data as Record<string, unknown>,
  }
}
