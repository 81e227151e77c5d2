// `fleetkit node hold NODE --reason TEXT` (src/lifecycle/node/node-hold.ts).
import { Flags } from '@oclif/core'

import { transitionCommand } from '../../cli/transition-command.js'
import type { NodeHoldResult } from '../../lifecycle/node/node-hold.js'

const ownFlags = {
  reason: Flags.string({
    summary: 'Why the node is hands-off (one line; recorded with who and when).',
    required: true,
  }),
}

export default transitionCommand<NodeHoldResult, typeof ownFlags>({
  summary: 'Hold a node hands-off: fleetkit reconcile leaves it alone until node release; nothing on the host changes.',
  description: `Records who holds the node (FLEETKIT_ACTOR, else user@host), why (--reason) and when, and a node_held
event; node list and node show show the hold. The node's status, admission and host are not touched, and
fleetkit sync run by a person still reaches it. Holding a held node changes nothing. Not to be confused with
fleetkit alloc release, which frees capacity: node release only ends a hold.`,
  examples: [
    '<%= config.bin %> <%= command.id %> build-01 --reason "kernel debugging, ticket 4711"',
    '<%= config.bin %> <%= command.id %> build-01 --reason "disk swap" --json',
  ],
  flags: ownFlags,
  load: async (flags) => {
    const { holdNode } = await import('../../lifecycle/node/node-hold.js')
    return (input) => holdNode({ ...input, reason: flags.reason })
  },
})
