// One acting run per node (issue 37, item 3; docs/operations.md "Two operators at once"): `node
// provision` (and --resume), `node replace` and `node decommission` run holding the node's run lock
// (src/store/nodes/node-run-lock.ts), taken without waiting. A second run on the node while one acts
// is refused at once with NODE_BUSY, naming the command that holds it, before it reads the provider
// or changes anything.
import { FleetkitError } from '../../checks/fleetkit-error.js'
import { withNodeRunLock } from '../../store/nodes/node-run-lock.js'
import type { StatePool } from '../../store/transaction.js'

/** Runs `fn` as the only provisioning, replace or decommission run of `nodeId`; NODE_BUSY when one is under way. */
export async function asOnlyRun<T>(pool: StatePool, nodeId: string, command: string, fn: () => Promise<T>): Promise<T> {
  const run = await withNodeRunLock(pool, nodeId, command, () => fn())
  if (run.locked) return run.value
  const holder = run.holder === null ? 'another fleetkit run' : `\`fleetkit ${run.holder}\``
  throw new FleetkitError(
    'NODE_BUSY',
    `${nodeId} is busy: ${holder} is provisioning, replacing or decommissioning it right now; this run (fleetkit ${command}) changed nothing and sent nothing to the provider`,
    {
      actions: [
        'wait for that run to end, then run this command again if it is still needed',
        `fleetkit node show ${nodeId}`,
        `fleetkit events --node ${nodeId}`,
      ],
      data: { node: nodeId, command, holder: run.holder },
    },
  )
}
