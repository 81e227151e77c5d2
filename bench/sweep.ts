// Sweep benchmark: 10,000 nodes heartbeating, a few hundred of them silent. Times the sweep with
// nothing to reclaim (the gateway runs it every 2 s), the sweep that marks the silent ones
// unhealthy, and the one that reclaims them as lost (jobs fenced, allocations released).
//
//   npx tsx bench/sweep.ts [--nodes 10000] [--silent 300] [--runs 20]
//
// A disposable PostgreSQL on this machine (fsync off, bench/gateway/postgres.ts); prints its figures
// (docs/performance.md records them). Moving last_seen_at back is how the bench makes time pass
// on the database's clock, which is the only clock the sweep reads.
import { performance } from 'node:perf_hooks'

import { runSweep } from '../src/lifecycle/node/sweep.js'
import { DEFAULT_THRESHOLDS } from '../src/lifecycle/node/thresholds.js'
import { reserveAllocation } from '../src/store/scheduling/allocations.js'
import { recordHeartbeats } from '../src/store/nodes/heartbeats.js'
import { createJob } from '../src/store/scheduling/jobs.js'
import { recordNodeCapacity } from '../src/store/nodes/node-lifecycle.js'
import { upsertDeclaredNode } from '../src/store/nodes/nodes.js'
import { startBenchPostgres } from './gateway/postgres.js'

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback
  if (!Number.isInteger(value) || value < 1 || value > 100_000)
    throw new Error(`--${name} takes a whole number from 1 to 100000`)
  return value
}

const nodes = option('nodes', 10_000)
const silent = Math.min(option('silent', 300), nodes)
const runs = option('runs', 20)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (x: number) => `${x.toFixed(1)} ms`

const pg = await startBenchPostgres()
try {
  const pool = pg.pool
  const ids = Array.from({ length: nodes }, (_, i) => `n${String(i).padStart(5, '0')}`)
  const seeded = performance.now()
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(
      ids
        .slice(i, i + 50)
        .map((id, j) => upsertDeclaredNode(pool, { id, pool: `pool-${(i + j) % 20}`, status: 'active' })),
    )
  }
  await recordHeartbeats(
    pool,
    ids.map((nodeId) => ({ nodeId, seenAt: new Date(), facts: { cpu_count: 4, agent_version: '0.1.0' } })),
    { writtenAt: new Date() },
  )
  const victims = ids.slice(0, silent)
  for (const id of victims) {
    await recordNodeCapacity(pool, id, { cpu: 4, memoryMib: 8192, diskGib: 80 })
    await pool.query('UPDATE nodes SET schedulable = true WHERE id = $1', [id])
    await reserveAllocation(pool, { nodeId: id, owner: 'bench', cpu: 1, memoryMib: 1024, diskGib: 10, actor: 'bench' })
    await createJob(pool, { nodeId: id, kind: 'checks', now: new Date() })
  }
  await pool.query('VACUUM ANALYZE')
  console.log(
    `${nodes} active nodes in 20 pools, ${silent} with an allocation and a queued job (seeded in ${Math.round(performance.now() - seeded)} ms)`,
  )

  const quiet: number[] = []
  for (let i = 0; i < runs; i++) {
    const r = await runSweep(pool, DEFAULT_THRESHOLDS)
    if (r.lost.length + r.unhealthy.length > 0) throw new Error('a quiet sweep moved nodes')
    quiet.push(r.durationMs)
  }
  console.log(
    `sweep, nothing to reclaim: median ${ms(median(quiet))} over ${runs} runs (min ${ms(Math.min(...quiet))}, max ${ms(Math.max(...quiet))})`,
  )

  const silence = (seconds: number) =>
    pool.query('UPDATE nodes SET last_seen_at = now() - make_interval(secs => $2) WHERE id = ANY($1)', [
      victims,
      seconds,
    ])
  await silence(DEFAULT_THRESHOLDS.unhealthyAfterSeconds + 10)
  const unhealthy = await runSweep(pool, DEFAULT_THRESHOLDS)
  console.log(`sweep, ${unhealthy.unhealthy.length} nodes become unhealthy: ${ms(unhealthy.durationMs)}`)

  await silence(DEFAULT_THRESHOLDS.lostAfterSeconds + 10)
  const lost = await runSweep(pool, DEFAULT_THRESHOLDS)
  const fenced = lost.lost.reduce((n, l) => n + l.fencedJobs, 0)
  const released = lost.lost.reduce((n, l) => n + l.releasedAllocations, 0)
  console.log(
    `sweep, ${lost.lost.length} nodes lost (${fenced} jobs fenced, ${released} allocations released, one transaction each): ${ms(lost.durationMs)} (${ms(lost.durationMs / Math.max(1, lost.lost.length))} per node)`,
  )

  const replay: number[] = []
  for (let i = 0; i < runs; i++) replay.push((await runSweep(pool, DEFAULT_THRESHOLDS)).durationMs)
  console.log(`sweep after the reclamation (nothing left to do): median ${ms(median(replay))}`)
} finally {
  await pg.stop()
}
