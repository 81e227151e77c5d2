// A gateway that dies (SIGKILL, no clean-up) right after an enrollment committed and before its
// answer is sent: the fault the idempotent enrollment retry exists for. A test-only entry, run as a
// process of its own by startTestGateway({ mode: 'process', crashAfterEnrollCommit: true }): it reads
// the environment `fleetkit gateway serve` reads and prints the same `listening` and `gateway_ready` lines.
import 'reflect-metadata'

import { formatBind, loadGatewayConfig } from '../../src/gateway/config.js'
import { startGatewayWithControls } from '../../src/gateway/gateway.js'
import { DEFAULT_LOAD_SHEDDER_TUNING } from '../../src/gateway/load/load-shedder.js'
import { createLogger } from '../../src/log/logger.js'
import { loadPkiSet } from '../../src/pki/pki-set.js'
import { openDatabase } from '../../src/store/database.js'

const logger = createLogger({ component: 'gateway', env: process.env })
const config = loadGatewayConfig(process.env)
const pki = await loadPkiSet(config.pkiDir, new Date())
const database = await openDatabase({ databaseUrl: config.databaseUrl ?? '', stateDir: config.stateDir })
const gateway = await startGatewayWithControls(
  {
    pool: database.pool,
    pki,
    pkiDir: config.pkiDir,
    enrollBind: config.enrollBind,
    agentBind: config.agentBind,
    metricsBind: config.metricsBind,
    agentCertLifetimeSeconds: config.agentCertLifetimeSeconds,
    // As `fleetkit gateway serve` tunes it from the same variables (the test turns delay-based shedding off).
    tuning: {
      enrollConnections: config.enrollConnections,
      agentConnections: config.agentConnections,
      loadShedding: {
        ...DEFAULT_LOAD_SHEDDER_TUNING,
        delayThresholdsMs: config.shedDelayThresholdsMs ?? [Infinity, Infinity, Infinity],
      },
    },
    recoveryWindowSeconds: config.recoveryWindowSeconds,
    logger,
  },
  { afterEnrollmentCommit: () => process.kill(process.pid, 'SIGKILL') },
)
logger('info', 'listening', { listener: 'enroll', address: formatBind(gateway.enrollAddress) })
logger('info', 'listening', { listener: 'agent', address: formatBind(gateway.agentAddress) })
logger('info', 'listening', { listener: 'metrics', address: formatBind(gateway.metricsAddress!) })
logger('info', 'gateway_ready', { fault: 'crash-after-enroll-commit' })
process.once('SIGTERM', () => {
  void (async () => {
    await gateway.close()
    await database.close()
    process.exit(0)
  })()
})
