// A gateway that dies (SIGKILL, no clean-up) right after an enrollment committed and before its
// answer is sent: the fault the idempotent enrollment retry exists for. A test-only entry, run as a
// process of its own by startTestGateway({ mode: 'process', crashAfterEnrollCommit: true }): it reads
// the environment `fleetkit gateway serve` reads and prints the same `listening` and `gateway_ready` lines.
import 'reflect-metadata'

import { formatBind, loadGatewayConfig } from '../../src/gateway/config.js'
import { startGatewayWithControls } from '../../src/gateway/gateway.js'
import { gatewayOptionsFromConfig } from '../../src/gateway/serve.js'
import { createLogger } from '../../src/log/logger.js'
import { loadPkiSet } from '../../src/pki/pki-set.js'
import { openDatabase } from '../../src/store/database.js'

const logger = createLogger({ component: 'gateway', env: process.env })
const config = loadGatewayConfig(process.env)
const pki = await loadPkiSet(config.pkiDir, new Date())
const database = await openDatabase({ databaseUrl: config.databaseUrl ?? '', stateDir: config.stateDir })
// As `fleetkit gateway serve` builds them from the same variables.
const gateway = await startGatewayWithControls(
  { ...gatewayOptionsFromConfig(config), pool: database.pool, pki, logger },
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
