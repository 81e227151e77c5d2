// Waiting for Hetzner Cloud actions: one batched poll per round for all of them, so many servers
// cost one request a round, not one each (polling each every 500 ms spends the budget in minutes).
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Action } from './hetzner-types.js'

const DEFAULT_POLL_MS = 1000

export async function pollActions(
  fetchActions: (ids: readonly number[]) => Promise<Action[]>,
  sleep: (ms: number) => Promise<void>,
  ids: readonly number[],
  options: { pollMs?: number; signal?: AbortSignal; onProgress?: (running: number) => void },
): Promise<Action[]> {
  const done = new Map<number, Action>()
  let pending = [...new Set(ids)]
  while (pending.length > 0) {
    options.signal?.throwIfAborted()
    const actions = await fetchActions(pending)
    const missing = pending.filter((id) => !actions.some((action) => action.id === id))
    if (missing.length > 0) {
      // An ID the API does not know would otherwise be polled forever.
      throw new FleetkitError('PROVIDER_ERROR', `Hetzner Cloud does not know action ${missing.join(', ')}`, {
        data: { actionIds: missing },
      })
    }
    for (const action of actions) {
      if (action.status === 'error') {
        throw new FleetkitError(
          'PROVIDER_ACTION_FAILED',
          `Hetzner Cloud action ${action.id} (${action.command}) failed: ${action.error?.code ?? 'error'}: ${action.error?.message ?? ''}`.trimEnd(),
          {
            actions: ['read the action in the Hetzner Cloud console, fix its cause, then run the command again'],
            data: { actionId: action.id, command: action.command, providerCode: action.error?.code },
          },
        )
      }
      if (action.status === 'success') done.set(action.id, action)
    }
    pending = pending.filter((id) => !done.has(id))
    options.onProgress?.(pending.length)
    if (pending.length > 0) await sleep(options.pollMs ?? DEFAULT_POLL_MS)
  }
  return ids.map((id) => done.get(id)!)
}
