// The two entry points the commands call: install or uninstall the gateway service on this machine,
// with the event recorded in the state through the pool the command opens on demand.
import { readFile } from 'node:fs/promises'

import { GATEWAY_ENV_FILE, namesDatabaseUrl } from '../../config/gateway-env-file.js'
import { type Env, resolveStateDir } from '../../config/state-dir.js'
import { inspectEmbeddedServer, stopEmbeddedServer } from '../../store/embedded/server.js'
import { postgresRunAs } from '../../store/postgres-binaries.js'
import type { Queryable } from '../../store/database.js'
import { recordGatewayInstalled, recordGatewayUninstalled, waitForGatewayDatabase } from './gateway-events.js'
import { type GatewayInstallResult, installGateway } from './install.js'
import { requireRootAndSystemd } from './install-checks.js'
import { type InstallHost, machineInstallHost, runningCliCommand } from './install-host.js'
import { type InstallLockOptions, withInstallLock } from './install-lock.js'
import { type GatewayUninstallResult, uninstallGatewayService } from './uninstall.js'

type WithPool = <T>(work: (pool: Queryable) => Promise<T>) => Promise<T>

export interface ServiceOptions {
  env: Env
  withPool: WithPool
  host?: InstallHost
  /** The unit's command (default: this Node.js and this CLI's bin script). */
  command?: readonly string[]
  /** The machine-wide lock one install or uninstall holds (src/gateway/install/install-lock.ts). */
  lock?: InstallLockOptions
}

interface InstallServiceOptions extends ServiceOptions {
  /** Also install fleetkit-reconcile.service beside the gateway. */
  withReconcile?: boolean
}

/** The whole install under the machine's install lock: the unit, its database up, the event recorded. */
export async function installGatewayService(options: InstallServiceOptions): Promise<GatewayInstallResult> {
  const host = options.host ?? (await machineInstallHost())
  const stateDir = resolveStateDir(options.env)
  // Refused before the lock: a user who may not install must not hold up, or wait for, one who may.
  requireRootAndSystemd(host, 'install')
  return withInstallLock(
    'install',
    async () => {
      const result = await installGateway(host, {
        stateDir,
        command: options.command ?? runningCliCommand(),
        withReconcile: options.withReconcile ?? false,
      })
      if (result.changed) {
        // The gateway starts its database itself, inside its unit: wait for it rather than start one here.
        // (unless the gateway's settings name a DATABASE_URL: then it starts none).
        if (!options.env.DATABASE_URL && !(await gatewayEnvNamesDatabaseUrl()))
          await waitForGatewayDatabase(stateDir, host.run)
        await options.withPool((pool) => recordGatewayInstalled(pool, result))
      }
      return result
    },
    options.lock,
  )
}

/** The unit's EnvironmentFile: only whether it names DATABASE_URL is read, never the value. */
async function gatewayEnvNamesDatabaseUrl(path = GATEWAY_ENV_FILE): Promise<boolean> {
  return namesDatabaseUrl(await readFile(path, 'utf8').catch(() => ''))
}

export async function uninstallGatewayServiceOnMachine(
  options: ServiceOptions & { removeAccount: boolean },
): Promise<GatewayUninstallResult> {
  const host = options.host ?? (await machineInstallHost())
  const stateDir = resolveStateDir(options.env)
  const embedded = !options.env.DATABASE_URL
  requireRootAndSystemd(host, 'uninstall')
  return withInstallLock('uninstall', () => uninstall(host, stateDir, embedded, options), options.lock)
}

function uninstall(
  host: InstallHost,
  stateDir: string,
  embedded: boolean,
  options: ServiceOptions & { removeAccount: boolean },
): Promise<GatewayUninstallResult> {
  return uninstallGatewayService(host, {
    stateDir,
    removeAccount: options.removeAccount,
    postgresAccount: async () => {
      const ids = await postgresRunAs({ create: true, uid: 0 })
      if (!ids) throw new Error('no postgres user')
      return { uid: ids.uid, gid: ids.gid }
    },
    record: (result) => options.withPool((pool) => recordGatewayUninstalled(pool, result)),
    serverRunning: async () => embedded && (await inspectEmbeddedServer(stateDir)).running,
    stopServer: async () => {
      if (embedded) await stopEmbeddedServer(stateDir)
    },
  })
}
