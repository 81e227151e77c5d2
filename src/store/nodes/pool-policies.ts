// What the state knows of each pool's definition (table pool_policies, migration 0015): whether its
// nodes hold state. Written by the commands that read fleet.yaml, read by the sweep, which has none.
import type { Queryable } from '../database.js'

/**
 * Record every pool of a definition (one statement). A pool no longer declared keeps its last row:
 * its remaining nodes stay treated as their pool was, the conservative side for a stateful one.
 */
export async function recordPoolPolicies(
  q: Queryable,
  pools: Readonly<Record<string, { stateful?: boolean }>>,
): Promise<void> {
  const names = Object.keys(pools)
  if (names.length === 0) return
  await q.query(
    `INSERT INTO pool_policies (pool, stateful)
     SELECT * FROM unnest($1::text[], $2::boolean[])
     ON CONFLICT (pool) DO UPDATE SET stateful = EXCLUDED.stateful, updated_at = now()
      WHERE pool_policies.stateful IS DISTINCT FROM EXCLUDED.stateful`,
    [names, names.map((name) => pools[name]!.stateful === true)],
  )
}
