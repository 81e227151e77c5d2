// `fleetkit node drain NODE [--wait S]`: no new leases or reservations; jobs it holds finish
// (src/lifecycle/node/node-drain.ts).
import { Flags } from '@oclif/core'

import { transitionCommand } from '../../cli/transition-command.js'
import type { DrainResult } from '../../lifecycle/node/node-drain.js'

const ownFlags = {
  wait: Flags.integer({ summary: 'Seconds to wait for its live leases to end.', min: 1, max: 86400 }),
}

export default transitionCommand<DrainResult, typeof ownFlags>({
  summary: 'Drain a node: not schedulable, leases refused (403), while completions of jobs it holds still land.',
  description: `Reports the node's active allocations and live leases. With --wait, waits until no lease on
it is live (NODE_WAIT_TIMEOUT after that many seconds). Applies to active, unhealthy and draining nodes.
node undrain takes it back (active, not schedulable), node admit then schedules it again.`,
  examples: [
    '<%= config.bin %> <%= command.id %> build-01',
    '<%= config.bin %> <%= command.id %> build-01 --wait 600 --json',
  ],
  flags: ownFlags,
  // Ctrl-C during --wait ends the wait (the node stays draining) and the command exits 130.
  interruptible: true,
  load: async (flags) => {
    const { drainNode } = await import('../../lifecycle/node/node-drain.js')
    return (input) => drainNode({ ...input, ...(flags.wait === undefined ? {} : { waitSeconds: flags.wait }) })
  },
  more: (result) =>
    result.waitedSeconds === undefined ? [] : [`${result.nodeId}: no live leases after ${result.waitedSeconds} s`],
})
