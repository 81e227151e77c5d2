// What startGateway takes and what it returns: the options of one gateway process and the handle
// `fleetkit gateway serve` holds (gateway.ts builds it; what only tests use is in controls.ts).
import type { StatePool } from '../store/transaction.js'

import type { Clock } from '../config/clock.js'
import type { Logger } from '../log/logger.js'
import type { PkiSet } from '../pki/pki-set.js'
import type { BindAddress } from './config.js'
import type { EmbeddedDatabase } from './load/database-health.js'
import type { GatewaySweep } from './sweeper.js'
import type { ReadinessFunction } from './routes/status-view.js'
import type { GatewayTuning } from './tuning.js'

export interface GatewayOptions {
  pool: StatePool
  pki: PkiSet
  /** Where `pki` was loaded from; when set, the directory is watched and a changed set hot-reloaded. */
  pkiDir?: string
  enrollBind: BindAddress
  agentBind: BindAddress
  /** Omit for no metrics listener. */
  metricsBind?: BindAddress
  agentCertLifetimeSeconds: number
  /** Default 7 days (spec 05). */
  recoveryWindowSeconds?: number
  clock?: Clock
  logger?: Logger
  tuning?: Partial<GatewayTuning>
  /** The embedded database, started again when its postmaster died (serve passes it for the embedded default). */
  embeddedDatabase?: EmbeddedDatabase
  /**
   * The embedded server's state directory, whose off-host archive shipping (archive-ship.json) the
   * metrics report; omitted (a DATABASE_URL server): no shipping gauges.
   */
  archiveStateDir?: string
  /** The sweep (src/lifecycle/node/sweep.ts with its thresholds, and those thresholds); omitted: this gateway never sweeps. */
  sweep?: GatewaySweep
  /**
   * <state dir>/releases: the releases `fleetkit release publish` wrote, served on the enrollment listener
   * (routes/release-routes.ts). Omitted: every release path is 404 release_not_found.
   */
  releasesDir?: string
  /** The readiness verdict the status page shows (src/lifecycle/view/fleet-ready.ts stateReadiness); omitted: none shown. */
  readiness?: ReadinessFunction
}

/** What the product holds: where the listeners listen, and the way to stop them. */
export interface RunningGateway {
  enrollAddress: BindAddress
  agentAddress: BindAddress
  metricsAddress: BindAddress | undefined
  close(): Promise<void>
}
