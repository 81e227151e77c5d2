// The local Hetzner Cloud stub's power actions on a server (poweron, poweroff, shutdown, reboot, reset):
// the API's routes and statuses (`off` after poweroff and shutdown, `running` after poweron), `locked`
// while another action runs on the server, and with --boot the same operation carried out on its machine.
import type { Action } from './hetzner-types.js'
import { apiError, type StubResponse } from './stub-errors.js'
import type { PowerOperation, StubMachines } from './stub-machines.js'
import type { StubServer } from './stub-resources.js'

/** What the power routes need of the stub: its servers, actions, and the machines behind it (--boot). */
export interface PowerContext {
  servers: Map<number, StubServer>
  machines?: StubMachines | undefined
  action(
    command: string,
    resources: { id: number; type: string }[],
    onFinish?: () => void,
    work?: Promise<void>,
  ): Action
  busy(type: string, id: number): boolean
}

/** The server's status once the operation finished (reboot and reset leave a running server running). */
const STATUS_AFTER: Record<PowerOperation, string | undefined> = {
  poweron: 'running',
  poweroff: 'off',
  shutdown: 'off',
  reboot: undefined,
  reset: undefined,
}

export function powerServer(ctx: PowerContext, id: number, operation: PowerOperation): StubResponse {
  const server = ctx.servers.get(id)
  if (!server) return apiError(404, 'not_found', 'server not found')
  if (ctx.busy('server', id)) return apiError(423, 'locked', 'the resource is locked by a running action')
  const work = ctx.machines?.power(id, operation)
  const after = STATUS_AFTER[operation]
  const action = ctx.action(
    `${operation === 'poweron' ? 'start' : operation === 'poweroff' ? 'stop' : operation}_server`,
    [{ id, type: 'server' }],
    () => {
      if (after && ctx.servers.get(id) === server) server.status = after
    },
    work,
  )
  return { status: 201, body: { action } }
}
