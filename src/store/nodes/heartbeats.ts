// Heartbeats and the host facts they carry: the one merge rule for two beats of a node
// (the gateway's coalescer and the batch writer both use it) and the one-statement batch write.
// The facts are the protocol's (src/protocol, a layer below): the store writes what the wire carries,
// bounded by the same function the gateway reads them with, so the two cannot disagree on a bound.
import { type HostFacts, boundHostFacts } from '../../protocol/host-facts.js'
import type { Queryable } from '../database.js'

export interface Heartbeat {
  nodeId: string
  seenAt: Date
  /** Omitted or null: only last_seen_at moves; the stored facts stay. Bounded again before writing. */
  facts?: Partial<HostFacts> | null
}

/**
 * The heartbeat merge rule, written once: of two beats of one node the later one wins
 * (a tie goes to `beat`, the one that arrived last), and a winner without facts keeps the other's facts.
 */
export function mergeHeartbeat(held: Heartbeat | undefined, beat: Heartbeat): Heartbeat {
  if (!held) return beat
  const [earlier, later] = beat.seenAt.getTime() >= held.seenAt.getTime() ? [held, beat] : [beat, held]
  return later.facts == null && earlier.facts != null ? { ...later, facts: earlier.facts } : later
}

/**
 * Write a batch of heartbeats in ONE statement (unnest over parallel arrays). last_seen_at
 * never moves backwards and facts older than the stored ones are ignored, so batches from
 * several gateways may land in any order. For one node in one batch, the latest heartbeat wins.
 * Returns the number of nodes updated (unknown nodes are ignored).
 * With `writtenAt` (the writer's clock now), last_seen_at is moved onto the DATABASE's clock
 * (seenAt + (now() - writtenAt)): the sweep judges silence on now(), and a gateway whose clock is
 * minutes off must not make its nodes look silent or fresh (issue 11).
 */
export async function recordHeartbeats(
  q: Queryable,
  batch: readonly Heartbeat[],
  options: { writtenAt?: Date } = {},
): Promise<number> {
  const latest = new Map<string, Heartbeat>()
  for (const beat of batch) latest.set(beat.nodeId, mergeHeartbeat(latest.get(beat.nodeId), beat))
  if (latest.size === 0) return 0
  const beats = [...latest.values()]
  const bounded = beats.map((b) => (b.facts == null ? undefined : boundHostFacts(b.facts)))
  const col = <T>(pick: (f: HostFacts) => T) => bounded.map((f) => (f ? pick(f) : null))
  const result = await q.query(
    `WITH locked AS (
       -- Row locks taken in id order: two gateways' overlapping batches cannot deadlock.
       SELECT id, host_facts_at FROM nodes WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE
     )
     UPDATE nodes AS n SET
       last_seen_at = GREATEST(n.last_seen_at, b.seen_at + COALESCE(now() - $12::timestamptz, interval '0')),
       host_cpu_count = CASE WHEN b.fresh THEN b.cpu_count ELSE n.host_cpu_count END,
       host_memory_mb = CASE WHEN b.fresh THEN b.memory_mb ELSE n.host_memory_mb END,
       host_data_disk_free_gb = CASE WHEN b.fresh THEN b.disk_free_gb ELSE n.host_data_disk_free_gb END,
       host_kernel = CASE WHEN b.fresh THEN b.kernel ELSE n.host_kernel END,
       host_docker_version = CASE WHEN b.fresh THEN b.docker_version ELSE n.host_docker_version END,
       host_agent_version = CASE WHEN b.fresh THEN b.agent_version ELSE n.host_agent_version END,
       host_bridge_netfilter = CASE WHEN b.fresh THEN b.bridge_netfilter ELSE n.host_bridge_netfilter END,
       host_clock_skew_ms = CASE WHEN b.fresh THEN b.clock_skew_ms ELSE n.host_clock_skew_ms END,
       host_facts_at = CASE WHEN b.fresh THEN b.seen_at ELSE n.host_facts_at END
     FROM (
       SELECT u.*, u.has_facts AND u.seen_at >= COALESCE(m.host_facts_at, '-infinity') AS fresh
       FROM unnest($1::text[], $2::timestamptz[], $3::boolean[], $4::integer[], $5::integer[], $6::double precision[],
                   $7::text[], $8::text[], $9::text[], $10::boolean[], $11::integer[])
            AS u(node_id, seen_at, has_facts, cpu_count, memory_mb, disk_free_gb, kernel, docker_version, agent_version, bridge_netfilter, clock_skew_ms)
       JOIN locked AS m ON m.id = u.node_id
     ) AS b
     WHERE n.id = b.node_id`,
    [
      beats.map((b) => b.nodeId),
      beats.map((b) => b.seenAt),
      bounded.map((f) => f !== undefined),
      col((f) => f.cpu_count),
      col((f) => f.memory_mb),
      col((f) => f.data_disk_free_gb),
      col((f) => f.kernel),
      col((f) => f.docker_version),
      col((f) => f.agent_version),
      col((f) => f.bridge_netfilter),
      col((f) => f.clock_skew_ms),
      options.writtenAt ?? null,
    ],
  )
  return result.rowCount ?? 0
}
