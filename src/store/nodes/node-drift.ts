// Each node's drift as its agent reports it (migration 0016): the gateway judges the host's digest
// against the fingerprint its last sync recorded and writes here only when the verdict changes.
// The event rule lives here, beside the row it guards: several gateways may judge one node.
import { appendEvent } from '../events.js'
import type { Queryable } from '../database.js'
import { type StatePool, withTransaction } from '../transaction.js'

export type DriftState = 'in_sync' | 'drifted' | 'unknown'

/** What one judgement found: a host's digest against the recorded fingerprint. */
export interface DriftVerdict {
  state: DriftState
  /** The fingerprint's parts (nft, sshd, unit, path ...) that differ, sorted; empty unless drifted. */
  parts: string[]
  /** Why the state is unknown (a snake_case word); null otherwise. */
  reason: string | null
  /** The host's digest, when it sent one. */
  digest: string | null
  /** The sync run whose fingerprint the digest was compared with. */
  fingerprintRunId: number | null
  /** When the host's check ran (the host's clock). */
  hostCheckedAt: Date | null
}

export interface NodeDriftRow extends DriftVerdict {
  nodeId: string
  /** When this state began (the judging gateway's clock). */
  since: Date
}

/** The fingerprint the host is judged against: node_fingerprints' row, as sync recorded it. */
export interface DriftBaseline {
  digest: string
  items: Record<string, string>
  runId: number
  recordedAt: Date
}

/**
 * The node's recorded fingerprint, its drift row and whether a sync is converging it now (a host
 * part-way through a converge differs from both fingerprints: not drift), in one read, the gateway's
 * only read per judgement. A run started over an hour ago and never finished does not count.
 */
export async function readDriftBaseline(
  q: Queryable,
  nodeId: string,
): Promise<{ fingerprint: DriftBaseline | null; drift: NodeDriftRow | null; syncing: boolean }> {
  const { rows } = await q.query<Record<string, unknown>>(
    `SELECT f.digest AS f_digest, f.items, f.run_id AS f_run, f.recorded_at,
            d.node_id AS d_node, d.state, d.parts, d.reason, d.digest AS d_digest, d.fingerprint_run_id, d.since, d.host_checked_at,
            EXISTS (SELECT 1 FROM sync_run_nodes sn JOIN sync_runs r ON r.id = sn.run_id
                     WHERE sn.node_id = n.id AND r.kind = 'sync' AND r.status = 'running'
                       AND sn.state IN ('pending', 'running') AND r.started_at > now() - interval '1 hour') AS syncing
       FROM (SELECT $1::text AS id) n
       LEFT JOIN node_fingerprints f ON f.node_id = n.id
       LEFT JOIN node_drift d ON d.node_id = n.id`,
    [nodeId],
  )
  const r = rows[0]!
  return {
    fingerprint:
      r.f_digest === null
        ? null
        : {
            digest: r.f_digest as string,
            items: r.items as Record<string, string>,
            runId: Number(r.f_run),
            recordedAt: r.recorded_at as Date,
          },
    drift: r.d_node === null ? null : toRow(r),
    syncing: r.syncing === true,
  }
}

function toRow(r: Record<string, unknown>): NodeDriftRow {
  return {
    nodeId: (r.d_node ?? r.node_id) as string,
    state: r.state as DriftState,
    parts: (r.parts as string[]) ?? [],
    reason: (r.reason as string | null) ?? null,
    digest: ((r.d_digest ?? r.digest) as string | null) ?? null,
    fingerprintRunId: r.fingerprint_run_id === null ? null : Number(r.fingerprint_run_id),
    since: r.since as Date,
    hostCheckedAt: (r.host_checked_at as Date | null) ?? null,
  }
}

/** Whether two verdicts say the same thing: state, parts and reason (a new digest of the same drift is not news). */
export function sameDrift(a: Pick<DriftVerdict, 'state' | 'parts' | 'reason'>, b: typeof a): boolean {
  return a.state === b.state && a.reason === b.reason && a.parts.join(',') === b.parts.join(',')
}

/**
 * The event a change of verdict writes: `node_drifted` on entering drift or when other parts drift,
 * `node_drift_cleared` when a drifted node matches its fingerprint again; nothing for the rest
 * (an unknown state is no news: the agent or the fingerprint is missing, not the host's state).
 */
export function driftEventFor(
  previous: Pick<DriftVerdict, 'state' | 'parts'> | null,
  next: Pick<DriftVerdict, 'state' | 'parts'>,
): 'node_drifted' | 'node_drift_cleared' | null {
  if (next.state === 'drifted')
    return previous?.state === 'drifted' && previous.parts.join(',') === next.parts.join(',') ? null : 'node_drifted'
  if (next.state === 'in_sync' && previous?.state === 'drifted') return 'node_drift_cleared'
  return null
}

/**
 * Record a verdict if it differs from the stored one, with its event, in one transaction under the
 * node's row lock (two gateways judging the same change write one event). Returns what was written.
 */
export async function recordDriftVerdict(
  pool: StatePool,
  nodeId: string,
  verdict: DriftVerdict,
  at: Date,
): Promise<{ written: boolean; event: 'node_drifted' | 'node_drift_cleared' | null }> {
  return withTransaction(pool, async (client) => {
    const locked = await client.query('SELECT 1 FROM nodes WHERE id = $1 FOR UPDATE', [nodeId])
    if (locked.rowCount === 0) return { written: false, event: null }
    const { rows } = await client.query<Record<string, unknown>>('SELECT * FROM node_drift WHERE node_id = $1', [
      nodeId,
    ])
    const previous = rows[0] ? toRow(rows[0]) : null
    if (previous && sameDrift(previous, verdict)) return { written: false, event: null }
    await client.query(
      `INSERT INTO node_drift (node_id, state, parts, reason, digest, fingerprint_run_id, since, host_checked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (node_id) DO UPDATE SET state = EXCLUDED.state, parts = EXCLUDED.parts, reason = EXCLUDED.reason,
         digest = EXCLUDED.digest, fingerprint_run_id = EXCLUDED.fingerprint_run_id, since = EXCLUDED.since,
         host_checked_at = EXCLUDED.host_checked_at`,
      [
        nodeId,
        verdict.state,
        verdict.parts,
        verdict.reason,
        verdict.digest,
        verdict.fingerprintRunId,
        at,
        verdict.hostCheckedAt,
      ],
    )
    const event = driftEventFor(previous, verdict)
    if (event === 'node_drifted')
      await appendEvent(client, {
        kind: event,
        nodeId,
        at,
        data: {
          parts: verdict.parts,
          fingerprint_run_id: verdict.fingerprintRunId,
          host_checked_at: verdict.hostCheckedAt?.toISOString() ?? null,
        },
      })
    else if (event === 'node_drift_cleared')
      await appendEvent(client, {
        kind: event,
        nodeId,
        at,
        data: { parts: previous?.parts ?? [], fingerprint_run_id: verdict.fingerprintRunId },
      })
    return { written: true, event }
  })
}

/** The drift rows of the named nodes (all nodes when null), by node id. */
export async function listNodeDrift(q: Queryable, nodeIds: readonly string[] | null): Promise<NodeDriftRow[]> {
  const { rows } = await q.query<Record<string, unknown>>(
    'SELECT * FROM node_drift WHERE $1::text[] IS NULL OR node_id = ANY($1::text[]) ORDER BY node_id',
    [nodeIds],
  )
  return rows.map(toRow)
}

/** Drifted nodes per pool, of the nodes expected to heartbeat (what the fleetkit_nodes_drifted gauge shows). */
export async function countDriftedByPool(q: Queryable): Promise<{ pool: string; count: number }[]> {
  const { rows } = await q.query<{ pool: string; count: string }>(
    `SELECT n.pool, count(d.node_id) AS count FROM nodes n LEFT JOIN node_drift d ON d.node_id = n.id AND d.state = 'drifted'
      WHERE n.status NOT IN ('retired', 'provisioning', 'failed') GROUP BY n.pool ORDER BY n.pool`,
  )
  return rows.map((r) => ({ pool: r.pool, count: Number(r.count) }))
}
