// The lifecycle's metrics (issue 11) on a prom-client registry: leases, sweeps and reclamations,
// node counts by status and pool, heartbeat age and certificate expiry read from the database at
// scrape time, and prom-client's process and Node.js runtime defaults.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

import type { Queryable } from '../../store/database.js'
import { fleetGauges, soonestCertificateExpiryByPool } from '../../store/view/fleet.js'
import { collectTogether } from './scrape-gauges.js'

export class LifecycleMetrics {
  readonly registry = new Registry()
  readonly leases = new Counter({
    name: 'fleetkit_gateway_leases_total',
    help: 'Job lease requests and completions by outcome (leased, none: nothing to lease, node_not_active, node_lost, completion_conflict).',
    labelNames: ['outcome'],
    registers: [this.registry],
  })
  readonly sweeps = new Counter({
    name: 'fleetkit_sweeps_total',
    help: 'Sweep ticks by outcome (swept, busy: another sweep held the lock, not_leader: another gateway sweeps, failed).',
    labelNames: ['outcome'],
    registers: [this.registry],
  })
  readonly reclamations = new Counter({
    name: 'fleetkit_sweep_transitions_total',
    help: 'Nodes the sweep moved, by transition (unhealthy, lost).',
    labelNames: ['transition'],
    registers: [this.registry],
  })
  readonly fencedJobs = new Counter({
    name: 'fleetkit_sweep_fenced_jobs_total',
    help: 'Jobs fenced away from lost nodes.',
    registers: [this.registry],
  })
  readonly releasedAllocations = new Counter({
    name: 'fleetkit_sweep_released_allocations_total',
    help: 'Allocations released because their node was lost.',
    registers: [this.registry],
  })
  readonly sweepSeconds = new Histogram({
    name: 'fleetkit_sweep_duration_seconds',
    help: 'Time of one sweep.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  })

  constructor(pool: Queryable, onError: (query: string, error: unknown) => void) {
    collectDefaultMetrics({ register: this.registry })
    // Every outcome from 0, so a gateway that has not swept yet shows it (FleetkitSweepStalled sums `swept`).
    for (const outcome of ['swept', 'busy', 'not_leader', 'failed']) this.sweeps.inc({ outcome }, 0)
    const nodes = new Gauge({
      name: 'fleetkit_nodes',
      help: 'Nodes by status and pool.',
      labelNames: ['status', 'pool'],
      registers: [this.registry],
    })
    const age = new Gauge({
      name: 'fleetkit_node_heartbeat_age_seconds_max',
      help: 'The largest heartbeat age (database clock) of the nodes expected to heartbeat, by pool.',
      labelNames: ['pool'],
      registers: [this.registry],
    })
    const expiry = new Gauge({
      name: 'fleetkit_node_certificate_expiry_seconds_min',
      help: 'Seconds until the soonest expiry among the live agent certificates of connected nodes, by pool.',
      labelNames: ['pool'],
      registers: [this.registry],
    })
    // One read per scrape fills the three gauges.
    collectTogether(
      [nodes, age, expiry],
      async () => {
        const g = await fleetGauges(pool)
        const soonest = await soonestCertificateExpiryByPool(pool)
        nodes.reset()
        for (const s of g.byStatusPool) nodes.set({ status: s.status, pool: s.pool }, s.count)
        age.reset()
        for (const a of g.heartbeatAge) age.set({ pool: a.pool }, Math.round(a.maxSeconds * 10) / 10)
        expiry.reset()
        for (const e of soonest) expiry.set({ pool: e.pool }, Math.round(e.seconds))
      },
      (error) => onError('fleet gauges', error),
    )
  }

  render(): Promise<string> {
    return this.registry.metrics()
  }
}
