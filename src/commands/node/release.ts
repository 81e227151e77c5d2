// `fleetkit node release NODE` (src/lifecycle/node/node-hold.ts).
import { transitionCommand } from '../../cli/transition-command.js'
import type { NodeHoldResult } from '../../lifecycle/node/node-hold.js'

export default transitionCommand<NodeHoldResult>({
  summary: 'End a node hold: fleetkit reconcile may repair the node again (not alloc release, which frees capacity).',
  description: `Removes the hold node hold recorded and appends a node_released event naming who released it and the
hold it ended (who held it, why, since when). Releasing a node that is not held changes nothing.`,
  examples: ['<%= config.bin %> <%= command.id %> build-01', '<%= config.bin %> <%= command.id %> build-01 --json'],
  load: async () => (await import('../../lifecycle/node/node-hold.js')).releaseNode,
})
