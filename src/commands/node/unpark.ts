// `fleetkit node unpark NODE` (src/lifecycle/node/node-park.ts).
import { transitionCommand } from '../../cli/transition-command.js'
import type { TransitionResult } from '../../lifecycle/node/node-transition.js'

export default transitionCommand<TransitionResult>({
  summary:
    'Unpark a node: back to the status it was parked from, its silence counted from now; admit it to schedule again.',
  examples: ['<%= config.bin %> <%= command.id %> build-01', '<%= config.bin %> <%= command.id %> build-01 --json'],
  load: async () => (await import('../../lifecycle/node/node-park.js')).unparkNode,
})
