// After `fleetkit gateway install` started the unit: wait until the gateway's own database server
// is up (so the CLI never starts it outside the unit), then record what was done as an event.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Queryable } from '../../store/database.js'
import { inspectEmbeddedServer } from '../../store/embedded/server.js'
import { appendEvent } from '../../store/events.js'
import type { HostRunner } from './host-runner.js'
import type { GatewayInstallResult } from './install.js'
import type { GatewayUninstallResult } from './uninstall.js'
import { GATEWAY_UNIT_NAME } from './unit-file.js'

export interface WaitOptions {
  timeoutMs?: number
  sleep?: (ms: number) => Promise<void>
}

/** Resolves once the embedded server of `stateDir` runs; fails if the unit gave up or time ran out. */
export async function waitForGatewayDatabase(
  stateDir: string,
  run: HostRunner,
  options: WaitOptions = {},
): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)))
  const deadline = Date.now() + (options.timeoutMs ?? 120_000)
  for (;;) {
    if ((await inspectEmbeddedServer(stateDir)).running) return
    const state = (await run('systemctl', ['is-active', GATEWAY_UNIT_NAME])).stdout.trim()
    // Restart=always: a gateway that cannot start (no PKI yet, a bad setting) restarts every 2 s.
    const restarts = Number(
      (await run('systemctl', ['show', '--property=NRestarts', '--value', GATEWAY_UNIT_NAME])).stdout.trim(),
    )
    if (state === 'failed' || restarts >= 3 || Date.now() > deadline) {
      throw new FleetkitError(
        'GATEWAY_INSTALL_FAILED',
        `the gateway service was installed but its database did not come up (unit ${state}): read journalctl -u fleetkit-gateway`,
        {
          actions: ['journalctl -u fleetkit-gateway -n 50', 'systemctl status fleetkit-gateway'],
          data: { command: 'systemctl start fleetkit-gateway', output: `unit ${state}` },
        },
      )
    }
    await sleep(500)
  }
}

export async function recordGatewayInstalled(q: Queryable, result: GatewayInstallResult): Promise<void> {
  await appendEvent(q, {
    kind: 'gateway_installed',
    data: { unit: result.unitPath, account: result.account, stateDir: result.stateDir, actions: result.actions },
  })
}

export async function recordGatewayUninstalled(q: Queryable, result: GatewayUninstallResult): Promise<void> {
  await appendEvent(q, {
    kind: 'gateway_uninstalled',
    data: { unit: result.unitPath, account: result.account, stateDir: result.stateDir, actions: result.actions },
  })
}
