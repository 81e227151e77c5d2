// Whether a node's agent is alive as the gateway saw it: its status, a live certificate and the age of
// its last heartbeat on the database's clock (`fleetkit sync` reads it before and after an enrollment).
import type { Queryable } from '../database.js'

export interface AgentLiveness {
  status: string
  /** A certificate of the node that is neither revoked nor expired (database clock). */
  liveCertificate: boolean
  /** Seconds since the last heartbeat (or the enrollment) on the database's clock; null when never seen. */
  heartbeatAgeSeconds: number | null
  /** When the last heartbeat with host facts was taken; null when none arrived yet. */
  hostFactsAt: Date | null
}

export async function readAgentLiveness(q: Queryable, nodeId: string): Promise<AgentLiveness | undefined> {
  const { rows } = await q.query<{
    status: string
    live_certificate: boolean
    heartbeat_age: string | null
    host_facts_at: Date | null
  }>(
    `SELECT n.status, extract(epoch FROM now() - n.last_seen_at) AS heartbeat_age, n.host_facts_at,
            EXISTS (SELECT 1 FROM node_certificates c
                     WHERE c.node_id = n.id AND c.revoked_at IS NULL AND c.not_after > now()) AS live_certificate
       FROM nodes n WHERE n.id = $1`,
    [nodeId],
  )
  const row = rows[0]
  if (!row) return undefined
  return {
    status: row.status,
    liveCertificate: row.live_certificate,
    heartbeatAgeSeconds: row.heartbeat_age === null ? null : Number(row.heartbeat_age),
    hostFactsAt: row.host_facts_at,
  }
}
